mod bench_context;
mod cli;
mod context;
mod session;
mod subagent;
mod turn_loop;
