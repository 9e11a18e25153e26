mod cli;
mod turn_loop;
mod sandbox;
