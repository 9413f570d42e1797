//! JSON results as people and tools read them: indented down to the third level (every
//! result field, every statistics table, every row of a table on a line of its own), each
//! row written compactly. On a large fabric the per-VC and per-link tables are most of the
//! file: a row per line keeps it half the size of fully indented JSON and easy to `grep`.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io;

/// Containers nested deeper than this are written on one line.
const INDENTED_LEVELS: usize = 3;

/// `value` as JSON, indented by two spaces down to [`INDENTED_LEVELS`].
pub fn to_string<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Shallow { depth: 0, has_value: false });
    value.serialize(&mut ser).expect("results serialize");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's pretty formatter, stopped at a depth.
struct Shallow {
    /// Depth of the container being written (1 = the outermost).
    depth: usize,
    /// Whether the container being closed has any element.
    has_value: bool,
}

impl Shallow {
    fn indented(&self) -> bool {
        self.depth <= INDENTED_LEVELS
    }
    fn begin<W: ?Sized + io::Write>(&mut self, w: &mut W, open: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(open)
    }
    fn end<W: ?Sized + io::Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        if self.has_value && self.indented() {
            w.write_all(b"\n")?;
            indent(w, self.depth - 1)?;
        }
        self.depth -= 1;
        w.write_all(close)
    }
    fn element<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.indented() {
            w.write_all(if first { b"\n" } else { b",\n" })?;
            indent(w, self.depth)
        } else if first {
            Ok(())
        } else {
            w.write_all(b",")
        }
    }
}

fn indent<W: ?Sized + io::Write>(w: &mut W, levels: usize) -> io::Result<()> {
    for _ in 0..levels {
        w.write_all(b"  ")?;
    }
    Ok(())
}

impl Formatter for Shallow {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.element(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.element(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.indented() { b": " } else { b":" })
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn sample() -> Value {
        json!({
            "deliveries": 7,
            "problems": [],
            "empty": {},
            "stats": {
                "cycles": 4,
                "vcs": [
                    {"node": 0, "port": "inj0", "histogram": [4, 0], "note": "a \"quoted\" name"},
                    {"node": 1, "port": "in0", "histogram": [], "nested": {"deep": [1, [2, 3]]}}
                ],
                "links": []
            },
            "ratio": 0.25,
            "deadlock": null
        })
    }

    /// What is written reads back as the same value.
    #[test]
    fn round_trips() {
        let v = sample();
        let text = to_string(&v);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v, "{text}");
    }

    /// The shape: fields and table rows on lines of their own, rows compact.
    #[test]
    fn rows_on_one_line_each() {
        let text = to_string(&sample());
        // (`json!` objects keep their keys sorted.)
        let expected = r#"{
  "deadlock": null,
  "deliveries": 7,
  "empty": {},
  "problems": [],
  "ratio": 0.25,
  "stats": {
    "cycles": 4,
    "links": [],
    "vcs": [
      {"histogram":[4,0],"node":0,"note":"a \"quoted\" name","port":"inj0"},
      {"histogram":[],"nested":{"deep":[1,[2,3]]},"node":1,"port":"in0"}
    ]
  }
}"#;
        assert_eq!(text, expected);
    }
}
