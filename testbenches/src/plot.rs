//! Axis ticks for the reproductions' log-scale plots: chosen here rather than by the
//! plotting library, whose log-axis ticks rounded to the same label twice ("10, 10").

/// Draw an SVG picture of `size` pixels with `draw` (which presents it) and write it to
/// `path` whole or not at all ([`crate::output`]).
pub fn svg_file(
    path: &std::path::Path,
    size: (u32, u32),
    draw: impl FnOnce(
        plotters::prelude::DrawingArea<plotters::prelude::SVGBackend<'_>, plotters::coord::Shift>,
    ) -> Result<(), crate::config::ConfigError>,
) -> Result<(), crate::config::ConfigError> {
    use plotters::prelude::IntoDrawingArea;
    let mut text = String::new();
    draw(plotters::prelude::SVGBackend::with_string(&mut text, size).into_drawing_area())?;
    crate::output::write_file("out", path, text)
}

/// 1, 2 and 5 times the powers of ten within `lo..=hi`.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = m * decade;
            if (lo..=hi).contains(&t) {
                ticks.push(t);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// Every power of two within `lo..=hi` (buffer depths).
pub fn pow2_ticks_all(lo: f64, hi: f64) -> Vec<f64> {
    (0..64).map(|k| 2f64.powi(k)).filter(|t| (lo..=hi).contains(t)).collect()
}

/// Every other power of two within `lo..=hi` (message lengths in bytes).
pub fn pow2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    (0..64).step_by(2).map(|k| 2f64.powi(k)).filter(|t| (lo..=hi).contains(t)).collect()
}

/// A number as few digits as it needs, up to three decimals (0.5, 2, 10000, 9.667): tick
/// labels, and slot counts in the reports.
pub fn tick_label(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A byte count's label: 512, 2K, 32K.
pub fn bytes_label(v: f64) -> String {
    if v >= 1024.0 { format!("{}K", tick_label(v / 1024.0)) } else { tick_label(v) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_distinct_and_labelled_once() {
        assert_eq!(log_ticks(0.8, 130.0), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!(log_ticks(0.5, 3.0), vec![0.5, 1.0, 2.0]);
        assert_eq!(pow2_ticks(6.0, 90000.0), vec![16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0]);
        let labels: Vec<String> = log_ticks(4.0, 30000.0).into_iter().map(tick_label).collect();
        assert_eq!(labels, ["5", "10", "20", "50", "100", "200", "500", "1000", "2000", "5000", "10000", "20000"]);
        assert_eq!(
            pow2_ticks(6.0, 90000.0).into_iter().map(bytes_label).collect::<Vec<_>>(),
            ["16", "64", "256", "1K", "4K", "16K", "64K"]
        );
        assert_eq!(tick_label(0.5), "0.5");
        assert_eq!((tick_label(9.666_666), tick_label(2.0001), tick_label(1e7)), ("9.667".into(), "2".into(), "10000000".into()));
    }
}
