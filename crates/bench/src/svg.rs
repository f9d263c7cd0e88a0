//! A hand-written SVG scatter plot with an optional fitted line: title, axes, ticks, tick labels
//! and axis labels.
//!
//! Just enough for the growth report; it is not a plotting library (one series, linear axes, fixed
//! size, no legend).

use std::fmt::Write as _;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 56.0;

/// A scatter plot of `points` with an optional line y = intercept + slope · x.
#[derive(Debug, Clone, Copy)]
pub struct Plot<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// Label under the x axis.
    pub x_label: &'a str,
    /// Label beside the y axis.
    pub y_label: &'a str,
    /// The data, as (x, y).
    pub points: &'a [(f64, f64)],
    /// `(intercept, slope)` of a line drawn across the x range of the data (no extrapolation).
    pub line: Option<(f64, f64)>,
}

/// An axis range rounded out to "nice" ticks (steps of 1, 2 or 5 × 10^k).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    step: f64,
}

impl Axis {
    /// An axis covering `lo..=hi` (and zero, when all data are non-negative) with about 5 ticks.
    fn covering(lo: f64, hi: f64) -> Self {
        let lo = if lo >= 0.0 { 0.0 } else { lo };
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (lo - 1.0, lo + 1.0)
        };
        let raw = (hi - lo) / 5.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|&s| s >= raw)
            .unwrap_or(10.0 * magnitude);
        Self {
            lo: (lo / step).floor() * step,
            hi: (hi / step).ceil() * step,
            step,
        }
    }

    fn ticks(self) -> impl Iterator<Item = f64> {
        let count = ((self.hi - self.lo) / self.step).round() as usize;
        (0..=count).map(move |i| self.lo + i as f64 * self.step)
    }

    fn label(self, v: f64) -> String {
        let decimals = (-self.step.log10().floor()).max(0.0) as usize;
        format!("{v:.decimals$}")
    }

    /// Position of `v` between `from` (at lo) and `to` (at hi).
    fn map(self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.lo) / (self.hi - self.lo) * (to - from)
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Plot<'_> {
    /// The plot as a standalone SVG document.
    pub fn render(&self) -> String {
        let finite =
            |f: fn(&(f64, f64)) -> f64| self.points.iter().map(f).filter(|v| v.is_finite());
        let bounds = |f: fn(&(f64, f64)) -> f64| {
            let lo = finite(f).fold(f64::INFINITY, f64::min);
            let hi = finite(f).fold(f64::NEG_INFINITY, f64::max);
            if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
        };
        let (x_lo, x_hi) = bounds(|p| p.0);
        let (mut y_lo, mut y_hi) = bounds(|p| p.1);
        if let Some((a, b)) = self.line {
            for y in [a + b * x_lo, a + b * x_hi]
                .into_iter()
                .filter(|y| y.is_finite())
            {
                y_lo = y_lo.min(y);
                y_hi = y_hi.max(y);
            }
        }
        let xa = Axis::covering(x_lo, x_hi);
        let ya = Axis::covering(y_lo, y_hi);
        let (left, right, top, bottom) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
        let px = |x: f64| xa.map(x, left, right);
        let py = |y: f64| ya.map(y, bottom, top);

        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
             viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <text x=\"{}\" y=\"26\" text-anchor=\"middle\" font-size=\"16\">{}</text>\n",
            WIDTH / 2.0,
            escape(self.title)
        );
        for v in xa.ticks() {
            let x = px(v);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{bottom}\" stroke=\"#eee\"/>\
                 <line x1=\"{x:.1}\" y1=\"{bottom}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"black\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                bottom + 5.0,
                bottom + 19.0,
                xa.label(v)
            );
        }
        for v in ya.ticks() {
            let y = py(v);
            let _ = writeln!(
                s,
                "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{right}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\
                 <line x1=\"{}\" y1=\"{y:.1}\" x2=\"{left}\" y2=\"{y:.1}\" stroke=\"black\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 5.0,
                left - 8.0,
                y + 4.0,
                ya.label(v)
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"black\"/>\n\
             <line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" stroke=\"black\"/>\n\
             <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n\
             <text transform=\"translate(18 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            (left + right) / 2.0,
            HEIGHT - 14.0,
            escape(self.x_label),
            (top + bottom) / 2.0,
            escape(self.y_label)
        );
        if let Some((a, b)) = self.line {
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#c33\" \
                 stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
                px(x_lo),
                py(a + b * x_lo),
                px(x_hi),
                py(a + b * x_hi)
            );
        }
        for &(x, y) in self
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
        {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#25a\"/>",
                px(x),
                py(y)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes() {
        assert_eq!(
            Axis::covering(1.0, 8.0),
            Axis {
                lo: 0.0,
                hi: 8.0,
                step: 2.0
            }
        );
        assert_eq!(Axis::covering(3.0, 3.0).step, 1.0);
        let a = Axis::covering(-0.3, 0.7);
        assert_eq!((a.lo, a.hi), (-0.4, 0.8));
        assert_eq!(a.label(0.2), "0.2");
        assert_eq!(Axis::covering(0.0, 730.0).ticks().count(), 5);
    }

    #[test]
    fn renders_points_line_and_labels() {
        let pts = [(1.0, 10.0), (2.0, 20.0), (4.0, 40.0)];
        let svg = Plot {
            title: "RSS <n>",
            x_label: "n",
            y_label: "MiB",
            points: &pts,
            line: Some((0.0, 10.0)),
        }
        .render();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("stroke-dasharray"));
        assert!(svg.contains("RSS &lt;n&gt;"));
        // x axis 0..4 step 1 → 5 tick labels; y axis 0..40 step 10 → 5.
        assert_eq!(svg.matches("text-anchor=\"end\"").count(), 5);
    }

    #[test]
    fn empty_data_still_renders() {
        let svg = Plot {
            title: "t",
            x_label: "x",
            y_label: "y",
            points: &[],
            line: None,
        }
        .render();
        assert!(svg.contains("</svg>") && !svg.contains("<circle"));
    }
}
