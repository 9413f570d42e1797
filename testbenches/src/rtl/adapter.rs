//! Adapters (`--rtl-adapter FILE.toml`): a designer's router with its own port map, put in
//! the fabric's co-simulation through a generated SystemVerilog wrapper (docs/rtl-adapter.md).
//!
//! The adapter file names the designer's module, maps each signal of the reference port map
//! (`rtl/router.sv`, docs/rtl.md "Ports") to one of its ports, sets its parameters from the
//! reference parameters, and may give its flit layout. [`parse`] checks it and writes the
//! wrapper `flitwave_adapter`: exactly the reference router's parameters and ports, around
//! one instance of the designer's module; Verilator builds the wrapper as the top.

use crate::config::{ConfigError, toml_error};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The wrapper's module name: Verilator's top module.
pub const TOP: &str = "flitwave_adapter";

/// The setting refusals name.
const FIELD: &str = "rtl-adapter";

/// A checked adapter: the designer's module and the wrapper around it.
#[derive(Clone, Debug, PartialEq)]
pub struct Adapter {
    /// The designer's module the wrapper instantiates.
    pub module: String,
    /// The wrapper's module name (Verilator's top): "flitwave_adapter".
    pub top: String,
    /// The wrapper's SystemVerilog text.
    pub sv: String,
    /// Extra directories where Verilator looks for the designer's modules (-y), from the
    /// TOML's `search` list, resolved relative to the TOML file's directory.
    pub search: Vec<PathBuf>,
}

/// The adapter file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    module: Option<String>,
    #[serde(default)]
    search: Vec<String>,
    reset: Option<Reset>,
    signals: Option<Signals>,
    /// The designer's parameter -> an expression over the reference parameters.
    #[serde(default)]
    parameters: toml::Table,
    flit: Option<Flit>,
    /// The designer's extra input ports -> constant expressions.
    #[serde(default)]
    tie: toml::Table,
    /// The designer's extra output ports, left unconnected.
    #[serde(default)]
    open: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reset {
    signal: Option<String>,
    #[serde(default)]
    active_low: bool,
}

/// The reference signals (all but the reset) -> the designer's port names.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Signals {
    clk: Option<String>,
    node_id: Option<String>,
    in_valid: Option<String>,
    in_vc: Option<String>,
    in_flit: Option<String>,
    cr_out_valid: Option<String>,
    cr_out_vc: Option<String>,
    out_valid: Option<String>,
    out_vc: Option<String>,
    out_flit: Option<String>,
    cr_in_valid: Option<String>,
    cr_in_vc: Option<String>,
}

impl Signals {
    /// Each reference signal with the designer's port, in the reference's port order.
    fn pairs(&self) -> [(&'static str, &Option<String>); 12] {
        [
            ("clk", &self.clk),
            ("node_id", &self.node_id),
            ("in_valid", &self.in_valid),
            ("in_vc", &self.in_vc),
            ("in_flit", &self.in_flit),
            ("cr_out_valid", &self.cr_out_valid),
            ("cr_out_vc", &self.cr_out_vc),
            ("out_valid", &self.out_valid),
            ("out_vc", &self.out_vc),
            ("out_flit", &self.out_flit),
            ("cr_in_valid", &self.cr_in_valid),
            ("cr_in_vc", &self.cr_in_vc),
        ]
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Flit {
    fields: Option<Vec<String>>,
}

/// The signals `[signals]` maps, in the reference's port order.
pub const SIGNALS: [&str; 12] = [
    "clk",
    "node_id",
    "in_valid",
    "in_vc",
    "in_flit",
    "cr_out_valid",
    "cr_out_vc",
    "out_valid",
    "out_vc",
    "out_flit",
    "cr_in_valid",
    "cr_in_vc",
];

/// The flit's fields from bit 0 in the reference layout, each with its width (a reference
/// parameter, or a number of bits).
pub const FLIT_FIELDS: [(&str, &str); 10] = [
    ("head", "1"),
    ("tail", "1"),
    ("packet", "PKT_W"),
    ("seq", "SEQ_W"),
    ("kind", "2"),
    ("src", "NODE_W"),
    ("dest", "NODE_W"),
    ("key", "KEY_W"),
    ("len", "LEN_W"),
    ("span", "SPAN_W"),
];

/// The reference router's parameters (docs/rtl.md, "Parameters"), with their declarations
/// as in `rtl/router.sv`.
const PARAMETERS: [(&str, &str); 15] = [
    ("TOPOLOGY", "parameter int TOPOLOGY = 0"),
    ("DIMS", "parameter int DIMS = 2"),
    ("SIZES", "parameter logic [16*DIMS-1:0] SIZES = {16'd4, 16'd4}"),
    ("NIC_CHANNELS", "parameter int NIC_CHANNELS = 1"),
    ("VCS", "parameter int VCS = 2"),
    ("EJ_VCS", "parameter int EJ_VCS = 2"),
    ("DEPTH", "parameter int DEPTH = 4"),
    ("INJ_DEPTH", "parameter int INJ_DEPTH = 4"),
    ("SWITCHING", "parameter int SWITCHING = 0"),
    ("PKT_W", "parameter int PKT_W = 32"),
    ("SEQ_W", "parameter int SEQ_W = 16"),
    ("NODE_W", "parameter int NODE_W = 24"),
    ("KEY_W", "parameter int KEY_W = 24"),
    ("LEN_W", "parameter int LEN_W = 16"),
    ("SPAN_W", "parameter int SPAN_W = 32"),
];

/// The reference router's derived parameters, also usable in expressions.
const LOCALPARAMS: [(&str, &str); 6] = [
    ("NET", "localparam int NET = TOPOLOGY == 1 ? DIMS : 2 * DIMS"),
    ("P", "localparam int P = NET + NIC_CHANNELS"),
    ("MAXV", "localparam int MAXV = VCS > EJ_VCS ? VCS : EJ_VCS"),
    ("VC_W", "localparam int VC_W = MAXV > 1 ? $clog2(MAXV) : 1"),
    ("HDR_W", "localparam int HDR_W = 2 + 2 * NODE_W + KEY_W + LEN_W + SPAN_W"),
    ("FLIT_W", "localparam int FLIT_W = 2 + PKT_W + SEQ_W + HDR_W"),
];

/// The names an expression in `[parameters]` or `[tie]` may use.
fn known_name(s: &str) -> bool {
    PARAMETERS.iter().chain(LOCALPARAMS.iter()).any(|(n, _)| *n == s)
}

/// SystemVerilog keywords a name may not be (the common ones; Verilator refuses the rest).
const KEYWORDS: &str = "always always_comb always_ff always_latch and assign automatic begin bit buf byte case casex casez class const \
    default defparam do else end endcase endfunction endgenerate endinterface endmodule endpackage endtask enum \
    for forever function generate genvar if initial inout input int integer interface localparam logic longint \
    module nand negedge nor not or output package parameter posedge reg repeat return shortint signed struct \
    supply0 supply1 task tri type typedef union unique unsigned var void while wire xnor xor";

/// A SystemVerilog simple identifier that is not a keyword.
fn identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !KEYWORDS.split_whitespace().any(|k| k == s)
}

const IDENTIFIER: &str = "a SystemVerilog identifier (a letter or _, then letters, digits, _ or $; not a keyword)";

/// Check that `s` is a simple constant expression: numbers (`4`, `16'h0004`, `'0`), the
/// reference parameters, `$clog2(...)`, parentheses, unary and binary operators and `?:`.
/// The reason when it is not.
fn check_expression(s: &str) -> Result<(), String> {
    let tokens = tokenize(s)?;
    if tokens.is_empty() {
        return Err("empty".to_string());
    }
    let mut p = ExprParser { t: &tokens, i: 0 };
    p.expr()?;
    match p.t.get(p.i) {
        None => Ok(()),
        Some(t) => Err(format!("unexpected `{}`", t.text())),
    }
}

#[derive(Debug, PartialEq)]
enum Token {
    Number(String),
    Name(String),
    Op(&'static str),
}

impl Token {
    fn text(&self) -> &str {
        match self {
            Token::Number(s) | Token::Name(s) => s,
            Token::Op(s) => s,
        }
    }
}

/// Operators, longest first.
const OPS: &[&str] = &[
    "<<<", ">>>", "**", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "~", "!", "?",
    ":", "(", ")",
];

fn tokenize(s: &str) -> Result<Vec<Token>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == b'\'' {
            // A number: decimal digits, optionally a size before a based literal
            // (`16'h0004`, `'d3`), or an unsized fill (`'0`, `'1`).
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && b[i] == b'\'' {
                i += 1;
                if i < b.len() && (b[i] == b's' || b[i] == b'S') {
                    i += 1;
                }
                let digits = match b.get(i).map(|c| c.to_ascii_lowercase()) {
                    Some(b'b') => "01xz_",
                    Some(b'o') => "01234567xz_",
                    Some(b'd') => "0123456789_",
                    Some(b'h') => "0123456789abcdefxz_",
                    Some(b'0' | b'1') if i == start + 1 => {
                        i += 1;
                        out.push(Token::Number(s[start..i].to_string()));
                        continue;
                    }
                    _ => return Err(format!("a malformed number at `{}`", &s[start..])),
                };
                i += 1;
                let first = i;
                while i < b.len() && digits.contains(b[i].to_ascii_lowercase() as char) {
                    i += 1;
                }
                if i == first {
                    return Err(format!("a malformed number at `{}`", &s[start..]));
                }
            }
            if i < b.len() && word(b[i]) {
                return Err(format!("a malformed number at `{}`", &s[start..]));
            }
            out.push(Token::Number(s[start..i].to_string()));
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            i += 1;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            let name = &s[start..i];
            if name != "$clog2" && !known_name(name) {
                return Err(format!(
                    "unknown name `{name}`: only the reference parameters {}, {} and $clog2",
                    PARAMETERS.iter().map(|p| p.0).collect::<Vec<_>>().join(" "),
                    LOCALPARAMS.iter().map(|p| p.0).collect::<Vec<_>>().join(" ")
                ));
            }
            out.push(Token::Name(name.to_string()));
        } else if let Some(op) = OPS.iter().find(|op| s[i..].starts_with(**op)) {
            out.push(Token::Op(op));
            i += op.len();
        } else {
            let ch = s[i..].chars().next().expect("within the text");
            return Err(format!("`{ch}` is not allowed (numbers, the reference parameters, $clog2, operators, parentheses, ?:)"));
        }
    }
    Ok(out)
}

/// expr := binary ['?' expr ':' expr]; binary := unary (op unary)*;
/// unary := {'-' | '+' | '!' | '~'} primary; primary := number | name | $clog2 '(' expr ')' | '(' expr ')'.
struct ExprParser<'a> {
    t: &'a [Token],
    i: usize,
}

impl ExprParser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.t.get(self.i)
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        match self.peek() {
            Some(Token::Op(o)) if *o == op => {
                self.i += 1;
                Ok(())
            }
            Some(t) => Err(format!("expected `{op}`, found `{}`", t.text())),
            None => Err(format!("expected `{op}` at the end")),
        }
    }

    fn expr(&mut self) -> Result<(), String> {
        self.binary()?;
        if self.peek() == Some(&Token::Op("?")) {
            self.i += 1;
            self.expr()?;
            self.expect(":")?;
            self.expr()?;
        }
        Ok(())
    }

    fn binary(&mut self) -> Result<(), String> {
        self.unary()?;
        while let Some(Token::Op(o)) = self.peek() {
            if ["?", ":", "(", ")", "!", "~"].contains(o) {
                break;
            }
            self.i += 1;
            self.unary()?;
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<(), String> {
        while let Some(Token::Op("-" | "+" | "!" | "~")) = self.peek() {
            self.i += 1;
        }
        match self.peek() {
            Some(Token::Number(_)) => {
                self.i += 1;
                Ok(())
            }
            Some(Token::Name(n)) if n == "$clog2" => {
                self.i += 1;
                self.expect("(")?;
                self.expr()?;
                self.expect(")")
            }
            Some(Token::Name(_)) => {
                self.i += 1;
                Ok(())
            }
            Some(Token::Op("(")) => {
                self.i += 1;
                self.expr()?;
                self.expect(")")
            }
            Some(t) => Err(format!("expected a number, a parameter or `(`, found `{}`", t.text())),
            None => Err("incomplete: it ends after an operator".to_string()),
        }
    }
}

/// Read and check the adapter file; every problem is one ConfigError line naming
/// "rtl-adapter", the offending key/value and what is allowed.
pub fn load(path: &str) -> Result<Adapter, ConfigError> {
    let text = crate::input::read_text(Path::new(path))
        .map_err(|e| ConfigError::new(FIELD, path, format!("an adapter TOML file, docs/rtl-adapter.md (cannot read it: {e})")))?;
    let dir = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    parse_named(&text, dir, path)
}

/// Check the adapter file's `text`; `dir` is its directory (`search` is relative to it).
pub fn parse(text: &str, dir: &Path) -> Result<Adapter, ConfigError> {
    parse_named(text, dir, "adapter")
}

fn parse_named(text: &str, dir: &Path, name: &str) -> Result<Adapter, ConfigError> {
    let _: toml::Table = text.parse().map_err(|e: toml::de::Error| toml_error(FIELD, "malformed TOML: ", text, name, &e))?;
    let f: File = toml::from_str(text).map_err(|e| toml_error(FIELD, "", text, name, &e))?;
    // `key = value` refused for `why`.
    let bad = |key: &str, value: &dyn std::fmt::Display, why: &str| ConfigError::new(FIELD, format!("{name}: {key} = {value}"), why);
    let missing = |key: &str, why: &str| ConfigError::new(FIELD, format!("{name}: {key}"), format!("missing: {why}"));

    let module = f.module.ok_or_else(|| missing("module", "the name of the designer's router module, e.g. module = \"my_router\""))?;
    if !identifier(&module) {
        return Err(bad("module", &quoted(&module), IDENTIFIER));
    }
    if module == TOP {
        return Err(bad("module", &quoted(&module), &format!("{TOP} is the wrapper's name: the designer's module needs another")));
    }

    let mut search = Vec::new();
    for s in &f.search {
        let d = dir.join(s);
        if !d.is_dir() {
            let why = format!("a directory relative to the adapter file's ({}); {} is not one", dir.display(), d.display());
            return Err(bad("search", &quoted(s), &why));
        }
        search.push(d);
    }

    // The designer's ports, each connected once.
    let mut ports: Vec<(String, String)> = Vec::new();
    let mut claim = |port: &str, key: &str| -> Result<(), ConfigError> {
        if !identifier(port) {
            return Err(bad(key, &quoted(port), IDENTIFIER));
        }
        if let Some((_, other)) = ports.iter().find(|(p, _)| p == port) {
            return Err(bad(key, &quoted(port), &format!("port {port} is already connected by {other}: each port once")));
        }
        ports.push((port.to_string(), key.to_string()));
        Ok(())
    };

    let reset = f
        .reset
        .ok_or_else(|| missing("reset", "a [reset] table with signal = \"the designer's reset port\" (and active_low = true if it is)"))?;
    let rst = reset.signal.ok_or_else(|| missing("reset.signal", "the designer's reset port, e.g. signal = \"rst_ni\""))?;
    claim(&rst, "reset.signal")?;

    let signals = f
        .signals
        .ok_or_else(|| missing("signals", &format!("a [signals] table mapping each of {} to the designer's port", SIGNALS.join(" "))))?;
    let mut connect: Vec<(&'static str, String)> = Vec::new();
    for (sig, port) in signals.pairs() {
        let key = &format!("signals.{sig}");
        let port = port
            .as_ref()
            .ok_or_else(|| missing(key, &format!("the designer's port for {sig}: every one of {} is required", SIGNALS.join(" "))))?;
        claim(port, key)?;
        connect.push((sig, port.clone()));
    }

    let mut params: Vec<(String, String)> = Vec::new();
    for (p, v) in &f.parameters {
        let key = format!("parameters.{p}");
        if !identifier(p) {
            return Err(bad(&key, &v, &format!("the key, the designer's parameter, must be {IDENTIFIER}")));
        }
        let e = value_text(v).ok_or_else(|| bad(&key, &v, "an expression over the reference parameters, as a string (or an integer)"))?;
        check_expression(&e).map_err(|why| bad(&key, &quoted(&e), &format!("an expression over the reference parameters: {why}")))?;
        params.push((p.clone(), e));
    }

    let mut ties: Vec<(String, String)> = Vec::new();
    for (p, v) in &f.tie {
        let e = value_text(v).ok_or_else(|| bad(&format!("tie.{p}"), &v, "a constant expression, as a string (or an integer)"))?;
        claim(p, &format!("tie.{p}"))?;
        check_expression(&e).map_err(|why| bad(&format!("tie.{p}"), &quoted(&e), &format!("a constant expression: {why}")))?;
        ties.push((p.clone(), e));
    }
    for p in &f.open {
        claim(p, "open")?;
    }

    let order: Option<Vec<String>> = match f.flit {
        None => None,
        Some(Flit { fields: None }) => {
            return Err(missing("flit.fields", &format!("the designer's flit fields from bit 0, a permutation of {}", field_names())));
        }
        Some(Flit { fields: Some(v) }) => Some(check_order(&v).map_err(|why| bad("flit.fields", &format!("{v:?}"), &why))?),
    };
    let reorder = order.filter(|o| !o.iter().zip(FLIT_FIELDS.iter()).all(|(a, (b, _))| a == b));

    let sv = wrapper(&Spec {
        module: &module,
        name,
        params: &params,
        reset: &rst,
        active_low: reset.active_low,
        connect: &connect,
        ties: &ties,
        open: &f.open,
        order: reorder.as_deref(),
    });
    Ok(Adapter { module, top: TOP.to_string(), sv, search })
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// An expression's text: a string, or an integer.
fn value_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.trim().to_string()),
        toml::Value::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

fn field_names() -> String {
    FLIT_FIELDS.iter().map(|f| f.0).collect::<Vec<_>>().join(" ")
}

/// `v` when it is a permutation of the ten flit fields; else what is wrong with it.
fn check_order(v: &[String]) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    let unknown: Vec<&str> = v.iter().map(|s| s.as_str()).filter(|s| !FLIT_FIELDS.iter().any(|f| f.0 == *s)).collect();
    if !unknown.is_empty() {
        problems.push(format!("unknown {}", unknown.join(" ")));
    }
    let twice: Vec<&str> = FLIT_FIELDS.iter().map(|f| f.0).filter(|f| v.iter().filter(|s| s == f).count() > 1).collect();
    if !twice.is_empty() {
        problems.push(format!("more than once {}", twice.join(" ")));
    }
    let absent: Vec<&str> = FLIT_FIELDS.iter().map(|f| f.0).filter(|f| !v.iter().any(|s| s == f)).collect();
    if !absent.is_empty() {
        problems.push(format!("missing {}", absent.join(" ")));
    }
    if problems.is_empty() {
        Ok(v.to_vec())
    } else {
        Err(format!("a permutation of the ten fields {} (the designer's layout from bit 0): {}", field_names(), problems.join("; ")))
    }
}

/// What the wrapper is made of.
struct Spec<'a> {
    module: &'a str,
    /// The adapter file (named in the header).
    name: &'a str,
    params: &'a [(String, String)],
    reset: &'a str,
    active_low: bool,
    connect: &'a [(&'static str, String)],
    ties: &'a [(String, String)],
    open: &'a [String],
    /// The designer's flit fields from bit 0, when not the reference order.
    order: Option<&'a [String]>,
}

/// The wrapper's SystemVerilog: the reference router's parameters and ports around one
/// instance of the designer's module.
fn wrapper(s: &Spec) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let name = s.name.replace(['\n', '\r'], " ");
    let _ = writeln!(o, "// Generated by flitwave (docs/rtl-adapter.md) from the adapter");
    let _ = writeln!(o, "//   {name}");
    let _ = writeln!(o, "// The reference router's parameters and ports (rtl/router.sv, docs/rtl.md) around the");
    let _ = writeln!(o, "// module {}. Port vectors are packed per port, [P-1:0][W-1:0].", s.module);
    let _ = writeln!(o, "module {TOP} #(");
    // The wrapper has every reference parameter, whether the designer's module uses it or not.
    let _ = writeln!(o, "    /* verilator lint_off UNUSEDPARAM */");
    for (_, decl) in PARAMETERS.iter() {
        let _ = writeln!(o, "    {decl},");
    }
    for (i, (_, decl)) in LOCALPARAMS.iter().enumerate() {
        let _ = writeln!(o, "    {decl}{}", if i + 1 < LOCALPARAMS.len() { "," } else { "" });
    }
    let _ = writeln!(o, "    /* verilator lint_on UNUSEDPARAM */");
    o.push_str(
        ") (
    input logic clk,
    input logic rst,
    input logic [NODE_W-1:0] node_id,
    input logic [P-1:0] in_valid,
    input logic [P-1:0][VC_W-1:0] in_vc,
    input logic [P-1:0][FLIT_W-1:0] in_flit,
    output logic [P-1:0] cr_out_valid,
    output logic [P-1:0][VC_W-1:0] cr_out_vc,
    output logic [P-1:0] out_valid,
    output logic [P-1:0][VC_W-1:0] out_vc,
    output logic [P-1:0][FLIT_W-1:0] out_flit,
    input logic [NET-1:0] cr_in_valid,
    input logic [NET-1:0][VC_W-1:0] cr_in_vc
);
",
    );
    if let Some(order) = s.order {
        let width = |f: &str| FLIT_FIELDS.iter().find(|x| x.0 == f).expect("a checked field").1;
        let _ = writeln!(o, "  // Flit fields from bit 0: the reference layout (R_*) and {}'s (D_*).", s.module);
        let offsets = |prefix: &str, fields: &mut dyn Iterator<Item = &str>, o: &mut String| {
            let mut prev: Option<&str> = None;
            for f in fields {
                let up = f.to_uppercase();
                match prev {
                    None => {
                        let _ = writeln!(o, "  localparam int {prefix}_{up} = 0;");
                    }
                    Some(p) => {
                        let _ = writeln!(o, "  localparam int {prefix}_{up} = {prefix}_{} + {};", p.to_uppercase(), width(p));
                    }
                }
                prev = Some(f);
            }
        };
        offsets("R", &mut FLIT_FIELDS.iter().map(|f| f.0), &mut o);
        offsets("D", &mut order.iter().map(|f| f.as_str()), &mut o);
        let _ = writeln!(o, "  // The flits in {}'s layout, into it and out of it.", s.module);
        let _ = writeln!(o, "  logic [P-1:0][FLIT_W-1:0] d_in_flit, d_out_flit;");
        let _ = writeln!(o, "  for (genvar p = 0; p < P; p++) begin : g_flit");
        for (f, w) in FLIT_FIELDS.iter() {
            let up = f.to_uppercase();
            let _ = writeln!(o, "    assign d_in_flit[p][D_{up}+:{w}] = in_flit[p][R_{up}+:{w}];");
        }
        for (f, w) in FLIT_FIELDS.iter() {
            let up = f.to_uppercase();
            let _ = writeln!(o, "    assign out_flit[p][R_{up}+:{w}] = d_out_flit[p][D_{up}+:{w}];");
        }
        let _ = writeln!(o, "  end");
        o.push('\n');
    }
    if s.params.is_empty() {
        let _ = writeln!(o, "  {} u_router (", s.module);
    } else {
        let _ = writeln!(o, "  {} #(", s.module);
        for (i, (p, e)) in s.params.iter().enumerate() {
            let _ = writeln!(o, "      .{p}({e}){}", if i + 1 < s.params.len() { "," } else { "" });
        }
        let _ = writeln!(o, "  ) u_router (");
    }
    let mut pins: Vec<String> = Vec::new();
    for (sig, port) in s.connect {
        if *sig == "node_id" {
            // The reset after the clock, as in the reference's port list.
            pins.push(format!(".{}({})", s.reset, if s.active_low { "!rst" } else { "rst" }));
        }
        let net = match (*sig, s.order.is_some()) {
            ("in_flit", true) => "d_in_flit",
            ("out_flit", true) => "d_out_flit",
            (sig, _) => sig,
        };
        pins.push(format!(".{port}({net})"));
    }
    for (p, e) in s.ties {
        pins.push(format!(".{p}({e})"));
    }
    for p in s.open {
        pins.push(format!(".{p}()"));
    }
    for (i, pin) in pins.iter().enumerate() {
        if i + s.open.len() == pins.len() {
            // The outputs left open on purpose.
            let _ = writeln!(o, "      /* verilator lint_off PINCONNECTEMPTY */");
        }
        let _ = writeln!(o, "      {pin}{}", if i + 1 < pins.len() { "," } else { "" });
    }
    if !s.open.is_empty() {
        let _ = writeln!(o, "      /* verilator lint_on PINCONNECTEMPTY */");
    }
    o.push_str("  );\nendmodule\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn examples() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl/examples")
    }

    fn example_text() -> String {
        std::fs::read_to_string(examples().join("renamed_router.toml")).expect("the example adapter")
    }

    /// The example with `from` replaced by `to` (which must occur).
    fn edited(from: &str, to: &str) -> String {
        let t = example_text();
        assert!(t.contains(from), "the example has {from:?}");
        t.replacen(from, to, 1)
    }

    /// The refusal of `text`, checked to be one line naming the adapter and `key`.
    fn refusal(text: &str, key: &str) -> String {
        let e = parse(text, &examples()).expect_err("refused").to_string();
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(e.starts_with("rtl-adapter: "), "names the setting: {e}");
        assert!(e.contains(key), "names {key}: {e}");
        e
    }

    #[test]
    fn the_example_parses() {
        let a = load(examples().join("renamed_router.toml").to_str().unwrap()).expect("the example adapter");
        assert_eq!(a.module, "renamed_router");
        assert_eq!(a.top, "flitwave_adapter");
        assert_eq!(a.search, vec![examples().join("..")]);
        assert!(a.search[0].join("router.sv").is_file());
        for want in [
            "module flitwave_adapter #(",
            "renamed_router #(",
            ".NUM_VCS(VCS)",
            ".rst_ni(!rst)",
            ".clk_i(clk)",
            ".flit_i(d_in_flit)",
            ".flit_o(d_out_flit)",
            ".credit_valid_i(cr_in_valid)",
            "localparam int D_HEAD = D_SEQ + SEQ_W;",
            "assign d_in_flit[p][D_DEST+:NODE_W] = in_flit[p][R_DEST+:NODE_W];",
            "assign out_flit[p][R_TAIL+:1] = d_out_flit[p][D_TAIL+:1];",
        ] {
            assert!(a.sv.contains(want), "the wrapper has {want:?}:\n{}", a.sv);
        }
    }

    #[test]
    fn the_reference_order_connects_flits_as_they_are() {
        let order = FLIT_FIELDS.iter().map(|f| format!("{:?}", f.0)).collect::<Vec<_>>().join(", ");
        let t = example_text();
        let start = t.find("fields = [").unwrap();
        let end = start + t[start..].find(']').unwrap() + 1;
        let text = format!("{}fields = [{order}]{}", &t[..start], &t[end..]);
        let a = parse(&text, &examples()).unwrap();
        assert!(a.sv.contains(".flit_i(in_flit)") && !a.sv.contains("g_flit"), "{}", a.sv);
        // Without [flit] at all, the same.
        let start = text.find("[flit]").unwrap();
        let b = parse(&text[..start], &examples()).unwrap();
        assert_eq!(a.sv, b.sv);
    }

    #[test]
    fn refusals_are_one_line_naming_the_key() {
        let e = refusal(&edited("[signals]", "[signals]\ncolour = \"red\""), "colour");
        assert!(e.contains("unknown field"), "{e}");
        refusal(&edited("[reset]", "frobnicate = 1\n[reset]"), "frobnicate");
        let t = example_text();
        let line = t.lines().find(|l| l.trim_start().starts_with("in_vc")).unwrap();
        let e = refusal(&t.replacen(&format!("{line}\n"), "", 1), "signals.in_vc");
        assert!(e.contains("missing"), "{e}");
        let e = refusal(&edited("\"kind\", ", ""), "flit.fields");
        assert!(e.contains("permutation") && e.contains("missing kind"), "{e}");
        let e = refusal(&edited("\"kind\"", "\"src\""), "flit.fields");
        assert!(e.contains("more than once src") && e.contains("missing kind"), "{e}");
        refusal(&edited("\"kind\"", "\"knid\""), "unknown knid");
        refusal(&edited("\"clk_i\"", "\"clk i\""), "signals.clk");
        refusal(&edited("\"clk_i\"", "\"1clk\""), "signals.clk");
        refusal(&edited("\"clk_i\"", "\"module\""), "signals.clk");
        refusal(&edited("\"clk_i\"", "\"rst_ni\""), "signals.clk");
        refusal(&edited("module = \"renamed_router\"", "module = \"my-router\""), "module");
        refusal(&edited("module = \"renamed_router\"", "module = \"flitwave_adapter\""), "module");
        refusal(&edited("\"rst_ni\"", "\"rst n\""), "reset.signal");
        refusal(&edited("active_low = true", "active_low = \"yes\""), "active_low");
        refusal(&edited("search = [\"..\"]", "search = [\"no-such-dir\"]"), "search");
        let e = refusal(&edited("\"VCS\"", "\"VCS; $finish\""), "parameters.NUM_VCS");
        assert!(e.contains("not allowed"), "{e}");
        let e = refusal(&edited("\"VCS\"", "\"FOO + 1\""), "parameters.NUM_VCS");
        assert!(e.contains("unknown name `FOO`"), "{e}");
        refusal(&edited("\"VCS\"", "\"(VCS\""), "parameters.NUM_VCS");
        refusal(&edited("\"VCS\"", "\"VCS +\""), "parameters.NUM_VCS");
        refusal(&edited("\"VCS\"", "true"), "parameters.NUM_VCS");
        refusal("module = \"r\"\n[reset]\nsignal = \"rst\"\n", "signals");
        refusal("[reset]\nsignal = \"rst\"\n", "module");
        refusal("module = \"r\"\nsignals = [", "malformed TOML");
    }

    #[test]
    fn extra_ports_tied_or_left_open() {
        let text = edited("[parameters]", "[tie]\nscan_en_i = \"1'b0\"\nmode_i = 3\n\n[parameters]").replacen(
            "search = [\"..\"]",
            "search = [\"..\"]\nopen = [\"debug_o\"]",
            1,
        );
        let a = parse(&text, &examples()).unwrap();
        for want in [".scan_en_i(1'b0),", ".mode_i(3),", "lint_off PINCONNECTEMPTY */\n      .debug_o()\n"] {
            assert!(a.sv.contains(want), "the wrapper has {want:?}:\n{}", a.sv);
        }
        refusal(&text.replacen("\"1'b0\"", "\"scan\"", 1), "tie.scan_en_i");
        refusal(&text.replacen("scan_en_i", "flit_i", 1), "tie.flit_i");
        refusal(&text.replacen("\"debug_o\"", "\"flit_o\"", 1), "open");
    }

    #[test]
    fn expressions() {
        for ok in
            ["VCS", "4", "16'h0004", "'0", "1'b1", "$clog2(VCS + 1)", "VCS > EJ_VCS ? VCS : EJ_VCS", "-(DEPTH * 2) % 3", "SIZES", "P*VC_W"]
        {
            assert_eq!(check_expression(ok), Ok(()), "{ok}");
        }
        for bad in ["", "VCS VCS", "VCS ?", "(", "()", "$clog2 VCS", "4'q1", "4x", "clk", "VCS;", "{VCS}", "VCS[0]", "a.b"] {
            assert!(check_expression(bad).is_err(), "{bad}");
        }
    }

    /// The example's wrapper, written into a scratch directory, lints clean with
    /// `verilator --lint-only -Wall` at the parameters of a 4x4 mesh with two VCs.
    #[test]
    fn the_example_wrapper_lints_clean() {
        if crate::rtl::verilator_version().is_none() {
            if std::env::var_os("FLITWAVE_REQUIRE_VERILATOR").is_some() {
                panic!("verilator is not on PATH and FLITWAVE_REQUIRE_VERILATOR is set");
            }
            eprintln!("skipped: verilator is not on PATH (the adapter's wrapper lint)");
            return;
        }
        let a = load(examples().join("renamed_router.toml").to_str().unwrap()).unwrap();
        let dir = std::env::temp_dir().join(format!("flitwave-adapter-lint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("flitwave_adapter.sv");
        std::fs::write(&file, &a.sv).unwrap();
        let topo = fabric::Topology::new(fabric::TopologyKind::Mesh, &[4, 4]);
        let params = router::RouterParams {
            switching: router::Switching::Wormhole,
            pipeline: router::Pipeline::REALISTIC,
            arbiter: router::ArbiterPolicy::RoundRobin,
            vcs: 2,
            buffer_flits: 4,
            inject_buffer_flits: 4,
            net_ports: topo.net_ports() as u8,
            nic_channels: 1,
            link_width: 1,
            multicast_va: router::MulticastVa::Atomic,
            replication: router::Replication::Sync,
            injection: router::InjectionVc::RoundRobin,
            ejection_vcs: 2,
            va_policy: router::VaPolicy::RoundRobin,
        };
        let mut cmd = std::process::Command::new("verilator");
        cmd.args(["--lint-only", "-Wall", "--top-module", &a.top]);
        for d in a.search.iter().chain([&examples()]) {
            cmd.arg("-y").arg(d);
        }
        let o = cmd.arg(&file).args(crate::rtl::generics(&topo, &params)).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && err.trim().is_empty(), "verilator lint of the wrapper:\n{err}\n{}", a.sv);
    }
}
