use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};
use std::path::Path;
use testbenches::cli::{Cli, Cmd, cmd_run};
use testbenches::{demo, list};

/// An allocation the system refuses ends the run with exit 2, never an abort.
#[global_allocator]
static ALLOC: testbenches::oom::ExitOnOom = testbenches::oom::ExitOnOom;

/// One line for a command-line error clap found, in the form `FIELD: VALUE: WHAT IS ALLOWED`.
fn clap_message(e: &clap::Error) -> String {
    let ctx = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // Lossy: an argument that is not UTF-8 is what this message may be about.
    let args: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let sub = args.iter().find(|a| !a.starts_with('-')).cloned();
    let cmd = Cli::command();
    match e.kind() {
        ErrorKind::UnknownArgument => {
            let flag = ctx(ContextKind::InvalidArg).unwrap_or_else(|| "?".into());
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (flag.clone(), None),
            };
            // The value the user wrote after it, if it looks like one.
            let value = inline.or_else(|| {
                if let Some(a) = args.iter().find(|a| a.starts_with(&format!("{flag}="))) {
                    return Some(a[flag.len() + 1..].to_string());
                }
                let i = args.iter().position(|a| *a == flag)?;
                args.get(i + 1).filter(|v| !v.starts_with("--")).cloned()
            });
            let (scope, flags) = match sub.as_deref().and_then(|s| cmd.find_subcommand(s)) {
                Some(sc) => (format!("flitwave {}", sc.get_name()), sc.get_arguments().filter_map(|a| a.get_long()).collect::<Vec<_>>()),
                None => ("flitwave".to_string(), vec!["help", "version"]),
            };
            let flags = flags.iter().map(|f| format!("--{f}")).collect::<Vec<_>>().join(", ");
            let hint = ctx(ContextKind::SuggestedArg).map(|s| format!("did you mean {s}? ")).unwrap_or_default();
            let value = value.map(|v| format!(": {v}")).unwrap_or_default();
            if flags.is_empty() {
                return format!("{name}{value}: unknown flag; {scope} takes none");
            }
            format!("{name}{value}: unknown flag; {hint}the flags of {scope} are {flags}")
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = ctx(ContextKind::InvalidArg).unwrap_or_else(|| "an argument".into());
            let scope = sub.clone().unwrap_or_else(|| "flitwave".into());
            let allowed = match sub.as_deref() {
                Some("reproduce") => {
                    format!("one of {}", testbenches::reproduce::PAPERS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "))
                }
                _ => format!("see flitwave {scope} --help"),
            };
            format!("{scope}: {missing} missing: {allowed}")
        }
        ErrorKind::InvalidUtf8 => {
            let raw: Vec<_> = std::env::args_os().skip(1).collect();
            let i = raw.iter().position(|a| a.to_str().is_none()).unwrap_or(0);
            let value = args.get(i).cloned().unwrap_or_default();
            // The flag it is the value of, when it follows one (`--dims X`) or carries it (`--dims=X`).
            let (field, value) = match value.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), v.to_string()),
                _ => match i.checked_sub(1).and_then(|j| args.get(j)).filter(|a| a.starts_with("--")) {
                    Some(f) => (f.clone(), value),
                    None => (format!("argument {}", i + 1), value),
                },
            };
            format!("{field}: {value:?}: not UTF-8; values are UTF-8 text")
        }
        ErrorKind::InvalidSubcommand => {
            let name = ctx(ContextKind::InvalidSubcommand).unwrap_or_else(|| "?".into());
            let cmds = cmd.get_subcommands().map(|c| c.get_name().to_string()).collect::<Vec<_>>().join(", ");
            format!("command: {name}: one of {cmds} (or none, for the demo)")
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string();
            format!("{first} (see flitwave --help)")
        }
    }
}

/// Standard output that cannot be written (`> /dev/full`, a full disk) makes `print!`
/// panic: say so in one line and exit as any output that could not be written
/// ([`testbenches::output::EXIT_WRITE_FAILED`]); every other panic, a bug, as before.
fn stdout_failure_is_an_io_error() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or_default();
        if let Some(reason) = msg.strip_prefix("failed printing to stdout: ") {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "flitwave: error: standard output: cannot write it: {reason}");
            testbenches::output::abandon();
            std::process::exit(testbenches::output::EXIT_WRITE_FAILED);
        }
        default(info);
    }));
}

fn main() {
    // Output into a pipe whose reader has gone (`flitwave list | head -1`) ends the process
    // quietly by SIGPIPE, as it does any Unix tool, instead of a panic on the failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of one signal, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A write past the file-size limit (`ulimit -f`) fails with "File too large" and is
    // reported like a full disk, the file that was there kept, instead of ending the process.
    #[cfg(unix)]
    // SAFETY: as above.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // Under an address-space limit (`ulimit -v`) every thread's malloc arena would reserve
    // 64 MiB of it (the signal watcher, a waveform writer, the parts of a split run): one
    // arena for all keeps what the memory check counts what the run takes.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes into `r`, a valid rlimit; mallopt only sets a malloc
        // parameter, before any thread starts.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_AS, &mut r) == 0 && r.rlim_cur != libc::RLIM_INFINITY {
                libc::mallopt(libc::M_ARENA_MAX, 1);
            }
        }
    }
    stdout_failure_is_an_io_error();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
            {
                e.exit();
            }
            eprintln!("flitwave: error: {}", clap_message(&e).replace('\n', " "));
            std::process::exit(2);
        }
    };
    let result = match cli.cmd {
        None => demo::run_demo(Path::new("flitwave-out")),
        Some(Cmd::Demo { out } | Cmd::Reproduce { out, .. }) if out.as_os_str() == "-" || out.as_os_str().is_empty() => {
            Err(testbenches::config::ConfigError::new(
                "out",
                format!("{:?}", out.display().to_string()),
                "a directory to write into (there is no standard output here)",
            ))
        }
        Some(Cmd::Demo { out }) => demo::run_demo(&out),
        Some(Cmd::List) => {
            print!("{}", list::text());
            Ok(0)
        }
        Some(Cmd::Run(args)) => {
            testbenches::interrupt::install("stopping at the current cycle and writing the outputs");
            cmd_run(&args)
        }
        Some(Cmd::SizeBuffers(args)) => testbenches::size_buffers::cmd_size_buffers(&args),
        Some(Cmd::CompareForwarding(args)) => testbenches::compare_forwarding::cmd_compare_forwarding(&args),
        Some(Cmd::Sweep(args)) => {
            testbenches::interrupt::install("finishing the runs under way, starting no more");
            testbenches::sweep::cmd_sweep(&args)
        }
        Some(Cmd::Merge(args)) => testbenches::sweep::cmd_merge(&args),
        Some(Cmd::Plot(args)) => testbenches::sweep_plot::cmd_plot(&args),
        Some(Cmd::Reproduce { paper, out, max_d }) => testbenches::reproduce::reproduce(&paper, &out, max_d),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("flitwave: error: {}", e.to_string().replace('\n', " "));
            // A file that could not be written after the work is no bad input.
            std::process::exit(if testbenches::output::write_failed() { testbenches::output::EXIT_WRITE_FAILED } else { 2 });
        }
    }
}
