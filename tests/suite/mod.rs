mod cli;
mod turn_loop;
mod permissions;
