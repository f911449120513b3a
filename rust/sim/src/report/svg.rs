//! Hand-made SVG line plots: linear or log axes with ticks and labels, one
//! `<path>` per series (and no other `<path>`), a legend on the right. Each
//! series has its own colour (Okabe–Ito palette, colour-blind safe) and dash
//! pattern, so curves stay apart in grey print too. Output is deterministic.

use std::fmt::Write as _;

const W: f64 = 650.0;
const H: f64 = 330.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 470.0; // the legend lives right of this
const TOP: f64 = 30.0;
const BOTTOM: f64 = 282.0;

const COLORS: [&str; 8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255"];
const DASHES: [&str; 7] = ["", "8 4", "2 3", "10 3 2 3", "4 4", "14 4", "2 2 6 2"];

/// Colour and dash pattern of the `i`-th series: distinct pairs for 56 series.
pub(crate) fn style(i: usize) -> (&'static str, &'static str) {
    (COLORS[i % COLORS.len()], DASHES[(i + i / COLORS.len()) % DASHES.len()])
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scale {
    Linear,
    /// Linear, with ticks on whole numbers only (items counted: jobs, runs).
    Whole,
    Log,
}

pub(crate) struct Axis {
    pub label: String,
    pub lo: f64,
    pub hi: f64,
    pub scale: Scale,
}

impl Axis {
    /// A log axis spanning whole decades around the positive values of `xs`.
    pub fn log_around(label: &str, xs: impl Iterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for x in xs.filter(|x| *x > 0.0 && x.is_finite()) {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        let lo = 10f64.powi(lo.log10().floor() as i32);
        let hi = 10f64.powi(hi.log10().ceil() as i32).max(lo * 10.0);
        Axis { label: label.into(), lo, hi, scale: Scale::Log }
    }

    pub fn linear(label: &str, lo: f64, hi: f64) -> Axis {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Axis { label: label.into(), lo, hi, scale: Scale::Linear }
    }

    /// A linear axis whose ticks fall on whole numbers.
    pub fn whole(label: &str, lo: f64, hi: f64) -> Axis {
        Axis { scale: Scale::Whole, ..Axis::linear(label, lo, hi) }
    }

    /// Position in [0, 1] of `v` (clamped: log axes put non-positive values at 0).
    fn frac(&self, v: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear | Scale::Whole => (v - self.lo) / (self.hi - self.lo),
            Scale::Log if v <= 0.0 => 0.0,
            Scale::Log => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
        };
        f.clamp(0.0, 1.0)
    }

    /// (value, labelled) ticks.
    fn ticks(&self) -> Vec<(f64, bool)> {
        match self.scale {
            Scale::Log => {
                let (a, b) = (self.lo.log10().round() as i32, self.hi.log10().round() as i32);
                let few = b - a <= 2;
                let mut t = Vec::new();
                for k in a..=b {
                    for m in 1..10 {
                        let v = m as f64 * 10f64.powi(k);
                        if v > self.hi * 1.0001 {
                            break;
                        }
                        t.push((v, m == 1 || (few && (m == 2 || m == 5))));
                    }
                }
                t
            }
            Scale::Linear | Scale::Whole => {
                let raw = (self.hi - self.lo) / 6.0;
                let (raw, steps): (f64, &[f64]) = match self.scale {
                    Scale::Whole => (raw.max(1.0), &[1.0, 2.0, 5.0, 10.0]),
                    _ => (raw, &[1.0, 2.0, 2.5, 5.0, 10.0]),
                };
                let mag = 10f64.powi(raw.log10().floor() as i32);
                let step = steps.iter().map(|m| m * mag).find(|s| *s >= raw * 0.999).unwrap_or(mag);
                let first = (self.lo / step).ceil() as i64;
                (first..)
                    .map(|k| k as f64 * step)
                    .take_while(|v| *v <= self.hi + step * 1e-6)
                    .map(|v| (v, true))
                    .collect()
            }
        }
    }
}

/// A tick label: `0.01`, `5`, `2k`, `10M`.
pub(crate) fn fmt_tick(v: f64) -> String {
    let (v, suffix) = if v.abs() >= 1e6 {
        (v / 1e6, "M")
    } else if v.abs() >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{}{suffix}", if s == "-0" { "0" } else { s })
}

pub(crate) struct Series {
    pub name: String,
    /// Data coordinates, in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// How a series' points are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Draw {
    /// Straight segments.
    Line,
    /// A staircase (for CDFs).
    Step,
    /// A dot per point, not joined (per-item values).
    Dots,
}

pub(crate) struct Plot {
    pub title: String,
    /// CSS class of the `<svg>` (e.g. `cdf`).
    pub class: &'static str,
    pub x: Axis,
    pub y: Axis,
    pub draw: Draw,
    pub series: Vec<Series>,
    /// Single figures drawn as rings over the curves (a paper's reported
    /// percentiles); not `<path>`s, so each series keeps its one path.
    pub marks: Vec<Marks>,
}

/// Points a paper reports, named, in the colour of the series they belong to.
pub(crate) struct Marks {
    pub name: String,
    /// The index of the series whose colour they take (`None`: black).
    pub series: Option<usize>,
    /// (x, y, what the point is, shown on hover).
    pub points: Vec<(f64, f64, String)>,
}

pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

impl Plot {
    fn px(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (LEFT + self.x.frac(x) * (RIGHT - LEFT), BOTTOM - self.y.frac(y) * (BOTTOM - TOP))
    }

    /// The path data of one series, dropping points less than a pixel from
    /// the last kept one (the first and last points are always kept).
    fn path_data(&self, points: &[(f64, f64)]) -> String {
        let mut d = String::new();
        let mut last: Option<(f64, f64)> = None;
        for (i, p) in points.iter().enumerate() {
            let (x, y) = self.px(*p);
            if let Some((lx, ly)) = last {
                let end = i + 1 == points.len();
                if !end && (x - lx).abs() < 0.75 && (y - ly).abs() < 0.75 {
                    continue;
                }
                let _ = match self.draw {
                    Draw::Step => write!(d, "H{x:.1}V{y:.1}"),
                    Draw::Line => write!(d, "L{x:.1},{y:.1}"),
                    Draw::Dots => write!(d, "M{x:.1},{y:.1}h0"),
                };
            } else {
                let _ = match self.draw {
                    Draw::Step => write!(d, "M{x:.1},{BOTTOM:.1}V{y:.1}"),
                    Draw::Line => write!(d, "M{x:.1},{y:.1}"),
                    Draw::Dots => write!(d, "M{x:.1},{y:.1}h0"),
                };
            }
            last = Some((x, y));
        }
        d
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="plot {}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}">"#,
            self.class,
            esc(&self.title)
        );
        let _ = writeln!(s, "<title>{}</title>", esc(&self.title));
        let _ = writeln!(s, r#"<text x="{LEFT}" y="18" class="title">{}</text>"#, esc(&self.title));
        // Grid, ticks and tick labels.
        for (v, labelled) in self.x.ticks() {
            let (x, _) = self.px((v, self.y.lo));
            let (grid, len) = if labelled { ("grid", 5.0) } else { ("minor", 3.0) };
            let _ = writeln!(s, r#"<line class="{grid}" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{BOTTOM}"/>"#);
            let _ =
                writeln!(s, r#"<line class="axis" x1="{x:.1}" y1="{BOTTOM}" x2="{x:.1}" y2="{:.1}"/>"#, BOTTOM + len);
            if labelled {
                let _ = writeln!(s, r#"<text x="{x:.1}" y="{:.1}" class="tx">{}</text>"#, BOTTOM + 17.0, fmt_tick(v));
            }
        }
        for (v, labelled) in self.y.ticks() {
            let (_, y) = self.px((self.x.lo, v));
            let (grid, len) = if labelled { ("grid", 5.0) } else { ("minor", 3.0) };
            let _ = writeln!(s, r#"<line class="{grid}" x1="{LEFT}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}"/>"#);
            let _ = writeln!(s, r#"<line class="axis" x1="{:.1}" y1="{y:.1}" x2="{LEFT}" y2="{y:.1}"/>"#, LEFT - len);
            if labelled {
                let _ =
                    writeln!(s, r#"<text x="{:.1}" y="{:.1}" class="ty">{}</text>"#, LEFT - 8.0, y + 4.0, fmt_tick(v));
            }
        }
        let _ = writeln!(
            s,
            r#"<rect class="frame" x="{LEFT}" y="{TOP}" width="{}" height="{}"/>"#,
            RIGHT - LEFT,
            BOTTOM - TOP
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="xl">{}</text>"#,
            (LEFT + RIGHT) / 2.0,
            H - 12.0,
            esc(&self.x.label)
        );
        let (cx, cy) = (16.0, (TOP + BOTTOM) / 2.0);
        let _ = writeln!(
            s,
            r#"<text x="{cx}" y="{cy}" class="yl" transform="rotate(-90 {cx} {cy})">{}</text>"#,
            esc(&self.y.label)
        );
        // Curves, then the legend.
        let class = if self.draw == Draw::Dots { "series dots" } else { "series" };
        // Colour and dash attribute; a dash pattern could hide a dot, so dots go by colour alone.
        let stroke = |i: usize| match style(i) {
            (color, dash) if dash.is_empty() || self.draw == Draw::Dots => (color, String::new()),
            (color, dash) => (color, format!(r#" stroke-dasharray="{dash}""#)),
        };
        for (i, series) in self.series.iter().enumerate() {
            let (color, dash) = stroke(i);
            let _ = writeln!(
                s,
                r#"<path class="{class}" d="{}" stroke="{color}"{dash}><title>{}</title></path>"#,
                self.path_data(&series.points),
                esc(&series.name)
            );
        }
        let mark_color = |m: &Marks| m.series.map_or("#000000", |i| style(i).0);
        for m in &self.marks {
            for (x, y, what) in &m.points {
                let (x, y) = self.px((*x, *y));
                let _ = writeln!(
                    s,
                    r#"<circle class="mark" cx="{x:.1}" cy="{y:.1}" r="5" stroke="{}"><title>{}</title></circle>"#,
                    mark_color(m),
                    esc(what)
                );
            }
        }
        for (i, series) in self.series.iter().enumerate() {
            let (color, dash) = stroke(i);
            let y = TOP + 10.0 + 18.0 * i as f64;
            let x = RIGHT + 12.0;
            let _ = writeln!(
                s,
                r#"<line class="key" x1="{x}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}"{dash}/>"#,
                x + 32.0
            );
            let _ =
                writeln!(s, r#"<text x="{:.1}" y="{:.1}" class="lg">{}</text>"#, x + 38.0, y + 4.0, esc(&series.name));
        }
        for (k, m) in self.marks.iter().enumerate() {
            let y = TOP + 10.0 + 18.0 * (self.series.len() + k) as f64;
            let x = RIGHT + 12.0;
            let _ = writeln!(
                s,
                r#"<circle class="mark" cx="{:.1}" cy="{y:.1}" r="5" stroke="{}"/>"#,
                x + 16.0,
                mark_color(m)
            );
            let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" class="lg">{}</text>"#, x + 38.0, y + 4.0, esc(&m.name));
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_labels() {
        let a = Axis::log_around("x", [0.3, 42.0].into_iter());
        assert_eq!((a.lo, a.hi), (0.1, 100.0));
        let labelled: Vec<String> = a.ticks().iter().filter(|t| t.1).map(|t| fmt_tick(t.0)).collect();
        assert_eq!(labelled, ["0.1", "1", "10", "100"]);
        let a = Axis::log_around("x", [2.0, 30.0].into_iter());
        let labelled: Vec<String> = a.ticks().iter().filter(|t| t.1).map(|t| fmt_tick(t.0)).collect();
        assert_eq!(labelled, ["1", "2", "5", "10", "20", "50", "100"]);
        let lin: Vec<String> = Axis::linear("y", 0.0, 1.0).ticks().iter().map(|t| fmt_tick(t.0)).collect();
        assert_eq!(lin, ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        assert_eq!(fmt_tick(20_000.0), "20k");
        let whole: Vec<String> = Axis::whole("job", 0.0, 3.0).ticks().iter().map(|t| fmt_tick(t.0)).collect();
        assert_eq!(whole, ["0", "1", "2", "3"]);
        let whole: Vec<String> = Axis::whole("job", 0.0, 14.0).ticks().iter().map(|t| fmt_tick(t.0)).collect();
        assert_eq!(whole, ["0", "5", "10"]);
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_ne!(style(0), style(8));
    }

    #[test]
    fn dense_series_are_thinned_to_pixels() {
        let pts: Vec<(f64, f64)> = (1..=100_000).map(|i| (i as f64, i as f64 / 100_000.0)).collect();
        let plot = Plot {
            title: "t".into(),
            class: "cdf",
            x: Axis::log_around("x", pts.iter().map(|p| p.0)),
            y: Axis::linear("F", 0.0, 1.0),
            draw: Draw::Step,
            series: vec![Series { name: "a".into(), points: pts }],
            marks: Vec::new(),
        };
        let d = plot.path_data(&plot.series[0].points);
        assert!(d.len() < 20_000, "{}", d.len());
        assert!(d.ends_with("V30.0"), "the last point is kept");
    }
}
