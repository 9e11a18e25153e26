mod cli;
mod turn_loop;
mod sandbox;
mod bash_tool;
mod sandbox_bench;
