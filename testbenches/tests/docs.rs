//! `docs/cli.md` ends with the help of every command, as this build prints it: the test
//! fails when a flag changes and the document does not (`FLITWAVE_BLESS=1 cargo test -p
//! testbenches --test docs` rewrites that part).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_flitwave");

const MARKER: &str =
    "<!-- Generated from `flitwave help`: `FLITWAVE_BLESS=1 cargo test -p testbenches --test docs` rewrites everything below. -->";

fn help(args: &[&str]) -> String {
    let o = Command::new(BIN).args(args).output().expect("flitwave runs");
    assert!(o.status.success(), "flitwave {args:?}");
    String::from_utf8(o.stdout).expect("UTF-8 help")
}

/// The commands `flitwave --help` lists, `help` aside.
fn commands(top: &str) -> Vec<String> {
    let list = top.split("Commands:\n").nth(1).expect("a command list");
    list.lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

fn generated() -> String {
    let top = help(&["--help"]);
    let mut s = format!("{MARKER}\n\n## Every command's help\n\n```text\n$ flitwave --help\n{top}```\n");
    for c in commands(&top) {
        s += &format!("\n### `flitwave {c}`\n\n```text\n$ flitwave {c} --help\n{}```\n", help(&[&c, "--help"]));
    }
    s
}

#[test]
fn cli_md_is_this_builds_help() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md");
    let doc = std::fs::read_to_string(path).expect("docs/cli.md");
    let at = doc.find(MARKER).unwrap_or(doc.len());
    let want = generated();
    if std::env::var_os("FLITWAVE_BLESS").is_some() {
        std::fs::write(path, format!("{}{want}", &doc[..at])).expect("docs/cli.md written");
        return;
    }
    assert!(commands(&help(&["--help"])).len() >= 9, "the command list was not found");
    assert!(
        doc[at..] == want,
        "docs/cli.md's generated part is not this build's help: run `FLITWAVE_BLESS=1 cargo test -p testbenches --test docs`"
    );
}
