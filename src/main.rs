use dbio::cli::{Cli, one_line_error};
use dbio::error::ExitCode;

fn main() {
    let cli = match Cli::parse_with_sources(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
                _ => {
                    dbio::stderr_line!("{}", one_line_error(&e));
                    std::process::exit(ExitCode::Usage as i32);
                }
            }
        }
    };
    let code = match dbio::app::main(cli) {
        Ok(code) => code,
        Err(e) => {
            dbio::stderr_line!("error: {}", dbio::units::one_line(&e.to_string(), &[]));
            e.exit_code()
        }
    };
    std::process::exit(code as i32);
}
