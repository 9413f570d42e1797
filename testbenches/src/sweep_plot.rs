//! `flitwave plot`: a figure of a sweep's results.csv against one of its keys, a line per
//! value of another, as SVG. Each point is the mean over the rows that share its x and
//! series values (the seeds, and any key not named), with a 95 % confidence interval: of
//! the mean over those rows where there are several, else the row's own interval where the
//! figure has one (`latency_avg_cycles` ↔ `latency_ci95_cycles`). Only rows with outcome
//! `ok` are drawn.

use crate::config::ConfigError;
use crate::size_buffers::bad;
use clap::Args;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Default)]
pub struct PlotArgs {
    /// A sweep's results.csv, or its directory.
    pub results: PathBuf,
    /// The column along the x axis (a grid key, usually).
    #[arg(long, allow_hyphen_values = true)]
    pub x: Option<String>,
    /// The column plotted (a figure such as latency_avg_cycles).
    #[arg(long, allow_hyphen_values = true)]
    pub y: Option<String>,
    /// A column whose values each get a line of their own.
    #[arg(long, allow_hyphen_values = true)]
    pub series: Option<String>,
    /// Only the rows with KEY equal to V (repeat for more keys).
    #[arg(long = "where", allow_hyphen_values = true)]
    pub filters: Vec<String>,
    /// The SVG file to write.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Records of RFC 4180 CSV text (quoted fields may hold commas, quotes and newlines).
pub fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted_field = false;
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '"' if field.is_empty() && !quoted_field => {
                quoted_field = true;
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => {
                            line += usize::from(c == '\n');
                            field.push(c);
                        }
                        None => return Err(format!("line {line}: a quoted field is not closed")),
                    }
                }
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                quoted_field = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                quoted_field = false;
                line += 1;
            }
            c if quoted_field => return Err(format!("line {line}: {c:?} after a quoted field")),
            c => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() || quoted_field {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

/// The 95 % confidence half-width of the mean of `ys` (Student's t), for two or more.
fn ci95_of_mean(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n;
    let var = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1.0);
    fabric::measure::t_975(ys.len() as u32 - 1) * (var / n).sqrt()
}

/// A cell as a number: booleans as 1 and 0.
fn number(s: &str) -> Option<f64> {
    match s {
        "true" => Some(1.0),
        "false" => Some(0.0),
        _ => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
    }
}

/// A line of the plot: its label, and (x, mean, half-width) per point.
type Line = (String, Vec<(f64, f64, f64)>);

/// A point's rows: x, their values, the last one's own half-width.
type Rows = (f64, Vec<f64>, Option<f64>);

/// What is drawn: the lines, the names along x (for a key of names), the most rows in a point.
struct Plotted {
    lines: Vec<Line>,
    names: Option<Vec<String>>,
    most: usize,
}

/// The lines of the plot, the x labels (for a key of names), the most rows in one point.
fn lines(header: &[String], rows: &[Vec<String>], args: &PlotArgs, source: &str) -> Result<Plotted, ConfigError> {
    let column = |field: &str, name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| bad(field, name, &format!("a column of {source}: {}", header.join(", "))))
    };
    let missing = |field: &str| bad(field, "missing", &format!("--{field} COLUMN, one of {}", header.join(", ")));
    let x = column("x", args.x.as_deref().ok_or_else(|| missing("x"))?)?;
    let y_name = args.y.as_deref().ok_or_else(|| missing("y"))?;
    let y = column("y", y_name)?;
    let ci = header.iter().position(|h| y_name.contains("_avg_") && *h == y_name.replace("_avg_", "_ci95_"));
    let series = args.series.as_deref().map(|s| column("series", s)).transpose()?;
    let outcome = header.iter().position(|h| h == "outcome");
    let mut filters = Vec::new();
    for f in &args.filters {
        let (k, v) = f.split_once('=').ok_or_else(|| bad("where", f, "KEY=VALUE, a column and the value its rows keep"))?;
        filters.push((column("where", k.trim())?, v.trim().to_string()));
    }
    let same = |cell: &str, v: &str| cell == v || number(cell).zip(number(v)).is_some_and(|(a, b)| a == b);
    let kept: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.len() == header.len())
        .filter(|r| outcome.is_none_or(|o| r[o] == "ok"))
        .filter(|r| filters.iter().all(|(k, v)| same(&r[*k], v)))
        .filter(|r| number(&r[y]).is_some())
        .collect();
    if kept.is_empty() {
        return Err(bad("y", y_name, "no row with outcome ok has a value of it (with the --where given)"));
    }
    // Names along x (a key like the topology), in the order of the rows.
    let mut names: Vec<String> = Vec::new();
    let categorical = kept.iter().any(|r| number(&r[x]).is_none());
    if categorical {
        for r in &kept {
            if !names.contains(&r[x]) {
                names.push(r[x].clone());
            }
        }
    }
    let x_of = |r: &Vec<String>| {
        if categorical { names.iter().position(|n| *n == r[x]).unwrap_or(0) as f64 } else { number(&r[x]).unwrap_or(0.0) }
    };
    // (series, x) -> (ys, the row's own half-width).
    let mut groups: Vec<(String, Vec<Rows>)> = Vec::new();
    for r in &kept {
        let label = match series {
            Some(s) => format!("{}={}", header[s], r[s]),
            None => y_name.to_string(),
        };
        let g = match groups.iter().position(|(l, _)| *l == label) {
            Some(i) => i,
            None => {
                groups.push((label, Vec::new()));
                groups.len() - 1
            }
        };
        let xv = x_of(r);
        let points = &mut groups[g].1;
        let p = match points.iter().position(|(px, _, _)| *px == xv) {
            Some(i) => i,
            None => {
                points.push((xv, Vec::new(), None));
                points.len() - 1
            }
        };
        points[p].1.push(number(&r[y]).expect("kept rows have a value"));
        points[p].2 = ci.and_then(|c| number(&r[c]));
    }
    let most = groups.iter().flat_map(|(_, p)| p.iter().map(|(_, ys, _)| ys.len())).max().unwrap_or(1);
    let lines = groups
        .into_iter()
        .map(|(label, points)| {
            let mut pts: Vec<(f64, f64, f64)> = points
                .into_iter()
                .map(|(x, ys, own)| {
                    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
                    let half = if ys.len() > 1 { ci95_of_mean(&ys) } else { own.unwrap_or(0.0) };
                    (x, mean, half)
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (label, pts)
        })
        .collect();
    Ok(Plotted { lines, names: categorical.then_some(names), most })
}

/// `flitwave plot`: returns the process exit code.
pub fn cmd_plot(args: &PlotArgs) -> Result<i32, ConfigError> {
    let out = args.out.as_deref().ok_or_else(|| bad("out", "missing", "the SVG file to write (--out FILE.svg)"))?;
    if out.as_os_str() == "-" || out.as_os_str().is_empty() || out.is_dir() {
        return Err(bad("out", &format!("{:?}", out.display().to_string()), "a file path for the SVG"));
    }
    let path = if args.results.is_dir() { args.results.join("results.csv") } else { args.results.clone() };
    let source = path.display().to_string();
    crate::output::check_paths(&[("out", &out.display().to_string())], &[("results", &path)])?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| bad("results", &source, &format!("a sweep's results.csv or its directory (cannot read it: {e})")))?;
    let mut records = parse_csv(&text).map_err(|e| bad("results", &source, &format!("CSV with a header row ({e})")))?.into_iter();
    let header = records.next().ok_or_else(|| bad("results", &source, "CSV with a header row (the file is empty)"))?;
    let rows: Vec<Vec<String>> = records.collect();
    let p = lines(&header, &rows, args, &source)?;
    draw(out, args, &p.lines, p.names.as_deref(), p.most)?;
    Ok(0)
}

fn draw(path: &Path, args: &PlotArgs, lines: &[Line], names: Option<&[String]>, most: usize) -> Result<(), ConfigError> {
    let fail = |e: String| ConfigError::new("out", path.display(), format!("cannot draw it: {e}"));
    let (x_name, y_name) = (args.x.as_deref().unwrap_or_default(), args.y.as_deref().unwrap_or_default());
    let all = || lines.iter().flat_map(|(_, p)| p.iter().copied());
    let (xmin, xmax) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (x, _, _)| (lo.min(x), hi.max(x)));
    let (ylo, yhi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, y, e)| (lo.min(y - e), hi.max(y + e)));
    let pad = ((xmax - xmin) * 0.05).max(if names.is_some() { 0.5 } else { xmax.abs() * 0.05 + 1e-9 });
    let (ylo, yhi) = (ylo.min(0.0), if yhi > 0.0 { yhi * 1.1 } else { 1.0 });
    crate::plot::svg_file(path, (720, 480), |root| {
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let note = if most > 1 { format!(" (mean of up to {most} runs, 95 % CI)") } else { String::new() };
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{y_name} against {x_name}{note}"), ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(xmin - pad..xmax + pad, ylo..yhi)
            .map_err(|e| fail(e.to_string()))?;
        let label = |x: &f64| match names {
            Some(n) if (x - x.round()).abs() < 1e-6 => n.get(x.round() as usize).cloned().unwrap_or_default(),
            Some(_) => String::new(),
            None => crate::plot::tick_label(*x),
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_name).y_desc(y_name).x_label_formatter(&label);
        if let Some(n) = names {
            mesh.x_labels(n.len() * 2 + 1);
        }
        mesh.draw().map_err(|e| fail(e.to_string()))?;
        for (k, (name, pts)) in lines.iter().enumerate() {
            let color = crate::reproduce::marked_line(&mut chart, k, name.clone(), pts.iter().map(|&(x, y, _)| (x, y)).collect(), &fail)?;
            let bars =
                pts.iter().filter(|p| p.2 > 0.0).map(|&(x, y, e)| PathElement::new(vec![(x, y - e), (x, y + e)], color.stroke_width(1)));
            chart.draw_series(bars).map_err(|e| fail(e.to_string()))?;
        }
        crate::reproduce::legend_and_present(&mut chart, &root, &fail)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_quotes_commas_and_empty_cells() {
        let r = parse_csv("a,b,c\n1,\"x, \"\"y\"\"\",\n\"multi\nline\",2,3\n").unwrap();
        assert_eq!(r, vec![vec!["a", "b", "c"], vec!["1", "x, \"y\"", ""], vec!["multi\nline", "2", "3"]]);
        assert!(parse_csv("a,\"b\n").is_err());
        assert_eq!(parse_csv("a,b").unwrap(), vec![vec!["a", "b"]]);
    }

    #[test]
    fn the_interval_of_a_mean_over_seeds() {
        // Two values 1 and 3: mean 2, s = sqrt(2), t(1) = 12.706.
        let h = ci95_of_mean(&[1.0, 3.0]);
        assert!((h - 12.706_205 * (2.0f64 / 2.0).sqrt()).abs() < 1e-3, "{h}");
    }
}
