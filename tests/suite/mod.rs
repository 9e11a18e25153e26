mod cli;
mod pty;
mod turn_loop;
mod ui;
