//! One module per subcommand: glue from validated options to the controller or agent, and out.

pub mod output;
pub mod serve;
pub mod stream;
