mod cli;
mod e2e;
mod request_shape;
mod turn_loop;
mod file_tools;
mod six_step;
