mod cli;
mod governance;
mod turn_loop;
