//! The `pi-session` command. The real work is in the library.

use clap::Parser;

#[derive(Parser)]
#[command(name = "pi-session", version, about)]
struct Cli {
    /// Serve JSON-RPC on stdin/stdout (see protocol/protocol.md).
    #[arg(long)]
    stdio: bool,

    #[command(flatten)]
    server: pi_session::rpc::StdioArgs,
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    if !cli.stdio {
        eprintln!("pi-session: nothing to do; run `pi-session --stdio` to serve JSON-RPC");
        std::process::exit(2);
    }
    let code = pi_session::rpc::serve_stdio(cli.server).await;
    // Exit here rather than returning: the runtime would otherwise wait for the blocking
    // thread still reading stdin, which may never see end of input.
    std::process::exit(code);
}
