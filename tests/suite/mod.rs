mod cli;
mod provider;
mod turn_loop;
