mod cli;
mod e2e;
mod file_tools;
mod governance;
mod request_shape;
mod six_step;
mod turn_loop;
