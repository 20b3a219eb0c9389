//! The `pi-session` binary: the command line lives in the library (`pi_session::run_cli`).

fn main() -> std::process::ExitCode {
    pi_session::run_cli()
}
