mod cli;
mod turn_loop;
