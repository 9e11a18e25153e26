mod cli;
mod context;
mod turn_loop;
