//! The MCP client (issue 17): servers over stdio and streamable HTTP on loopback, driven
//! through the binary with the mock model.

mod unchanged;
