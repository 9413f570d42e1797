use clap::Parser;
use std::path::Path;
use testbenches::cli::{Cli, Cmd, cmd_run};
use testbenches::{demo, list};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
            {
                e.exit();
            }
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            eprintln!("flitwave: error: {first} (see flitwave --help)");
            std::process::exit(2);
        }
    };
    let result = match cli.cmd {
        None => demo::run_demo(Path::new("flitwave-out")),
        Some(Cmd::Demo { out }) => demo::run_demo(&out),
        Some(Cmd::List) => {
            print!("{}", list::text());
            Ok(0)
        }
        Some(Cmd::Run(args)) => cmd_run(&args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("flitwave: error: {e}");
            std::process::exit(2);
        }
    }
}
