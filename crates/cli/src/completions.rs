//! Shell completions and the man page, generated from the clap definitions (so they never
//! drift from the options): `schedlab completions SHELL`, `schedlab man`.

use crate::CliError;

/// The completion script for `shell` (bash, zsh, fish, elvish, powershell) of `cmd`.
pub fn completions(cmd: &mut clap::Command, shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, cmd, "schedlab", &mut buf);
    out!("{}", String::from_utf8_lossy(&buf))
}

/// The man page (roff, section 1) of `cmd`: options, subcommands, exit statuses.
pub fn man(cmd: clap::Command) -> Result<(), CliError> {
    let cmd = cmd.after_long_help(EXIT_STATUS);
    let mut buf = Vec::new();
    let io = |e: std::io::Error| CliError { message: format!("man page: {e}"), code: 1 };
    clap_mangen::Man::new(cmd).render(&mut buf).map_err(io)?;
    out!("{}", String::from_utf8_lossy(&buf))
}

/// The exit statuses (`docs/cli.md`).
pub const EXIT_STATUS: &str = "Exit status: 0 success; 1 a run or an output failed; 2 bad input (a workload, \
machine or option at fault, a limit exceeded); 130 interrupted by SIGINT (Ctrl-C) and 143 by SIGTERM, \
after writing what was measured; 141 stdout's reader went away.";
