use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli_list;

/// Owns pi-compatible coding-agent session files.
#[derive(Parser)]
#[command(name = "pi-session", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List sessions, newest first, as pi's /resume does.
    List(cli_list::ListArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::List(args) => cli_list::run(args),
    }
}
