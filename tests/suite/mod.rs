mod cli;
mod permissions;
mod turn_loop;
