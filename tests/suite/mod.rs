mod cli;
mod doctor;
mod provider;
mod provider_client;
mod sse_props;
mod turn_loop;
