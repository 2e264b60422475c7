//! Threads per CPU as a heat map (beyond [`super::HEAT_MAP_CPUS`] CPUs, where one line per
//! CPU would be indistinguishable): time across, one row per CPU, colour the mean number of
//! runnable threads in each time column.

use super::axis::Axis;
use super::draw::{err, Entry};
use plotters::prelude::*;

/// Time columns drawn (the samples are averaged into them).
const COLUMNS: usize = 150;

/// One row per CPU: `(column start ns, column end ns, mean value)`.
pub(crate) struct Heat {
    pub rows: Vec<Vec<(f64, f64, f64)>>,
    pub max: f64,
}

impl Heat {
    /// From per-CPU samples at `times` (ns).
    pub fn new(times: &[u64], per_cpu: &[Vec<f64>], end_ns: u64) -> Heat {
        let w = times.len().div_ceil(COLUMNS).max(1);
        let mut max: f64 = 0.0;
        let rows = per_cpu
            .iter()
            .map(|vals| {
                let mut row = Vec::new();
                for (i, ch) in vals.chunks(w).enumerate() {
                    let a = times[i * w] as f64;
                    let b = times.get((i + 1) * w).map_or(end_ns as f64, |&t| t as f64).max(a);
                    let mean = ch.iter().sum::<f64>() / ch.len() as f64;
                    max = max.max(mean);
                    row.push((a, b, mean));
                }
                row
            })
            .collect();
        Heat { rows, max }
    }

    /// Drawing positions spanned (x: time, y: CPU rows).
    pub(super) fn positions(&self, x: &Axis) -> Vec<(f64, f64)> {
        let n = self.rows.len() as f64;
        let first = self.rows.iter().flat_map(|r| r.first()).map(|c| c.0).fold(f64::MAX, f64::min);
        let last = self.rows.iter().flat_map(|r| r.last()).map(|c| c.1).fold(f64::MIN, f64::max);
        if first > last {
            return Vec::new();
        }
        [(first, 0.0), (last, n)].into_iter().filter_map(|(a, b)| Some((x.pos(a)?, b))).collect()
    }

    /// Swatches from one thread to the busiest cell, evenly spaced on the colour scale.
    pub(super) fn legend(&self) -> Vec<Entry> {
        let mut v = vec![Entry { text: "empty: white".into(), color: WHITE.to_rgba(), dash: 0, swatch: true }];
        for f in [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0] {
            let val = ((1.0 + self.max).powf(f) - 1.0).max(1.0).round().min(self.max);
            if val > 0.0 && !v.iter().any(|e| e.text == format!("{} threads", super::axis::num(val))) {
                let text = format!("{} threads", super::axis::num(val));
                v.push(Entry { text, color: color(val, self.max), dash: 0, swatch: true });
            }
        }
        v
    }
}

/// White for empty, then pale yellow to dark red with the logarithm of the value, so one
/// thread and 500 are both visible on one map.
fn color(v: f64, max: f64) -> RGBAColor {
    if v <= 0.0 || max <= 0.0 {
        return WHITE.to_rgba();
    }
    let f = ((1.0 + v).ln() / (1.0 + max).ln()).clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    RGBColor(lerp(255.0, 150.0), lerp(235.0, 10.0), lerp(160.0, 20.0)).to_rgba()
}

pub(super) fn draw<DB: DrawingBackend>(area: &super::draw::PlotArea<DB>, h: &Heat, x: &Axis) -> Result<(), String> {
    for (cpu, row) in h.rows.iter().enumerate() {
        for &(a, b, v) in row {
            if v <= 0.0 {
                continue;
            }
            let (Some(a), Some(b)) = (x.pos(a), x.pos(b)) else { continue };
            let rect = Rectangle::new([(a, cpu as f64), (b, cpu as f64 + 1.0)], color(v, h.max).filled());
            area.draw(&rect).map_err(err)?;
        }
    }
    Ok(())
}
