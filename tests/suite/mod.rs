mod cli;
mod turn_loop;
mod file_tools;
mod six_step;
