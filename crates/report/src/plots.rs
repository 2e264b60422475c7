//! SVG figures from runs with a recorded series, modelled on the ULE-vs-CFS paper's:
//! cumulative run time per thread (Fig. 1, 3), the interactivity penalty per thread
//! (Fig. 2, 4), threads per core (Fig. 6, 7); plus every other per-task policy statistic
//! (CFS vruntime, lag, slice), per-CPU utilisation and the wakeup-latency CDF. With several
//! runs, each figure has one panel per scheduler, side by side.
//!
//! Every SVG carries its data's summary in `<metadata id="schedlab-data">` (JSON: per panel,
//! per series, the name, number of points and last value), so tests and tools can check a
//! figure without parsing its drawing.

use crate::study::group_of;
use plotters::coord::Shift;
use plotters::prelude::*;
use schedlab_metrics::{RunRecord, Series};
use serde::Serialize;

/// One figure: file name (`runtime.svg`), title and SVG text; [`Figure::png`] renders the
/// same drawing as PNG.
pub struct Figure {
    pub name: String,
    pub title: String,
    pub svg: String,
    xdesc: String,
    ydesc: String,
    panels: Vec<Panel>,
}

/// The font PNGs are drawn with (DejaVu Sans, vendored: no system fonts, the same pixels on
/// every host). SVG text names `sans-serif` and leaves the font to the viewer.
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

impl Figure {
    /// The figure as a PNG image.
    pub fn png(&self) -> Result<Vec<u8>, String> {
        register_font();
        let (w, h) = size(self.panels.len());
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            draw(root, &self.title, &self.xdesc, &self.ydesc, &self.panels)?;
        }
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut wr = enc.write_header().map_err(|e| format!("png: {e}"))?;
            wr.write_image_data(&rgb).map_err(|e| format!("png: {e}"))?;
        }
        Ok(out)
    }

    /// The PNG file name (`runtime.png`).
    pub fn png_name(&self) -> String {
        self.name.trim_end_matches(".svg").to_string() + ".png"
    }
}

/// Registers the vendored font once; text is measured with it for SVG and PNG alike.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // A valid TTF cannot fail to parse; if it did, drawing reports `FontUnavailable`.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

fn size(panels: usize) -> (u32, u32) {
    ((640 * panels.max(1)).min(1920) as u32, 480)
}

/// Draws a figure's panels side by side under its title on any plotters backend.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    xdesc: &str,
    ydesc: &str,
    panels: &[Panel],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(err)?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (area, p) in areas.iter().zip(panels) {
        draw_panel(area, p, xdesc, ydesc)?;
    }
    root.present().map_err(err)
}

#[derive(Serialize)]
struct MetaSeries {
    name: String,
    points: usize,
    last: f64,
}

#[derive(Serialize)]
struct MetaPanel {
    scheduler: String,
    series: Vec<MetaSeries>,
}

/// A line to draw: name, group (for colouring many lines), points.
struct Line {
    name: String,
    group: String,
    pts: Vec<(f64, f64)>,
}

struct Panel {
    scheduler: String,
    lines: Vec<Line>,
    /// Fixed y range (utilisation is 0–100 %).
    y_range: Option<(f64, f64)>,
}

/// Above this many lines a panel colours by group and lists groups in the legend.
const MAX_LEGEND: usize = 12;
/// Points kept per line; lines of crowded panels keep fewer.
const MAX_POINTS: usize = 600;
const MAX_POINTS_CROWDED: usize = 120;

fn sched(r: &RunRecord) -> String {
    r.scheduler.name.clone()
}

/// Keeps at most `max` points, always the last one.
fn thin_to(pts: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if pts.len() <= max {
        return pts;
    }
    let step = pts.len().div_ceil(max);
    let last = *pts.last().expect("non-empty");
    let mut v: Vec<(f64, f64)> = pts.into_iter().step_by(step).collect();
    if v.last() != Some(&last) {
        v.push(last);
    }
    v
}

fn thin(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    thin_to(pts, MAX_POINTS)
}

/// Crowded panels (legend by group) get fewer points per line.
fn thin_panel(mut p: Panel) -> Panel {
    if p.lines.len() > MAX_LEGEND {
        for l in &mut p.lines {
            l.pts = thin_to(std::mem::take(&mut l.pts), MAX_POINTS_CROWDED);
        }
    }
    p
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// All figures the runs support (runs without a series give only the latency CDF).
pub fn figures(rs: &[RunRecord]) -> Result<Vec<Figure>, String> {
    register_font();
    let mut out = Vec::new();
    let with: Vec<&RunRecord> = rs.iter().filter(|r| r.series.is_some()).collect();
    if !with.is_empty() {
        let panels = with.iter().map(|r| runtime_panel(r)).collect();
        out.push(figure("runtime.svg", "Cumulative run time per thread", "time (s)", "run time (ms)", panels)?);
        let panels = with
            .iter()
            .map(|r| cpu_panel(r, |s, c| s.cpu_runnable[c].iter().map(|&x| f64::from(x)).collect()))
            .collect();
        out.push(figure(
            "threads-per-cpu.svg",
            "Threads per CPU (runnable, incl. running)",
            "time (s)",
            "threads",
            panels,
        )?);
        let panels = with.iter().map(|r| lock_panel(r)).collect();
        out.push(figure(
            "rq-lock-contention.svg",
            "Runqueue-lock contention over time",
            "time (s)",
            "contended acquisitions (%)",
            panels,
        )?);
        let panels = with.iter().map(|r| util_panel(r)).collect();
        out.push(figure("cpu-utilisation.svg", "CPU utilisation", "time (s)", "busy (%)", panels)?);
        let mut names: Vec<String> = Vec::new();
        for r in &with {
            for n in &r.series.as_ref().expect("filtered").stat_names {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        for n in names {
            // Only the runs whose policy has this statistic.
            let panels = with.iter().map(|r| stat_panel(r, &n)).filter(|p| !p.lines.is_empty()).collect();
            let (title, unit) = stat_title(&n);
            out.push(figure(&format!("stat-{n}.svg"), &title, "time (s)", unit, panels)?);
        }
    }
    let cdf = Panel {
        scheduler: "all".into(),
        lines: rs
            .iter()
            .filter(|r| !r.latency_cdf.is_empty())
            .map(|r| Line {
                name: sched(r),
                group: sched(r),
                pts: r.latency_cdf.iter().map(|&(ns, q)| (ns as f64 / 1e3, q * 100.0)).collect(),
            })
            .collect(),
        y_range: Some((0.0, 100.0)),
    };
    if !cdf.lines.is_empty() {
        out.push(figure(
            "latency-cdf.svg",
            "Wakeup latency CDF (waking → running)",
            "latency (µs)",
            "tasks woken (%)",
            vec![cdf],
        )?);
    }
    Ok(out)
}

fn stat_title(n: &str) -> (String, &'static str) {
    match n {
        "score" => ("Interactivity penalty (ULE score; < 30 is interactive)".into(), "score"),
        "priority" => ("Priority (ULE td_priority; lower is better)".into(), "priority"),
        "vruntime" => ("vruntime per thread (CFS)".into(), "ns"),
        "lag" => ("Lag against min_vruntime (CFS; > 0 is owed CPU)".into(), "ns"),
        "slice" => ("Slice per thread".into(), "ns / stat ticks"),
        _ => (format!("{n} per thread"), ""),
    }
}

fn runtime_panel(r: &RunRecord) -> Panel {
    let s = r.series.as_ref().expect("series");
    let lines = r
        .tasks
        .iter()
        .map(|t| {
            let first = s.first.get(t.tid).copied().unwrap_or(0);
            let mut pts: Vec<(f64, f64)> = s
                .runtime_ns
                .get(t.tid)
                .map(|v| v.iter().enumerate().map(|(i, &x)| (secs(s.times_ns[first + i]), x as f64 / 1e6)).collect())
                .unwrap_or_default();
            // End at the exact total (the last sample may precede the end or the exit).
            pts.push((secs(t.exit_ns.unwrap_or(r.sim_ns)), t.runtime_ns as f64 / 1e6));
            Line { name: t.name.clone(), group: group_of(&t.name).to_string(), pts: thin(pts) }
        })
        .collect();
    Panel { scheduler: sched(r), lines, y_range: None }
}

fn cpu_panel(r: &RunRecord, f: impl Fn(&Series, usize) -> Vec<f64>) -> Panel {
    let s = r.series.as_ref().expect("series");
    let lines = (0..s.cpu_runnable.len())
        .map(|c| {
            let pts = s.times_ns.iter().zip(f(s, c)).map(|(&t, v)| (secs(t), v)).collect();
            Line { name: format!("cpu{c}"), group: format!("cpu{c}"), pts: thin(pts) }
        })
        .collect();
    Panel { scheduler: sched(r), lines, y_range: None }
}

/// Busy fraction per CPU, averaged over windows of 1/100 of the run.
fn util_panel(r: &RunRecord) -> Panel {
    let s = r.series.as_ref().expect("series");
    let w = (s.times_ns.len() / 100).max(1);
    let lines = (0..s.cpu_busy.len())
        .map(|c| {
            let pts = s.cpu_busy[c]
                .chunks(w)
                .enumerate()
                .map(|(i, ch)| {
                    let busy = ch.iter().map(|&b| f64::from(b)).sum::<f64>() / ch.len() as f64;
                    (secs(s.times_ns[(i * w).min(s.times_ns.len() - 1)]), busy * 100.0)
                })
                .collect();
            Line { name: format!("cpu{c}"), group: format!("cpu{c}"), pts }
        })
        .collect();
    Panel { scheduler: sched(r), lines, y_range: Some((0.0, 100.0)) }
}

/// Contended fraction of runqueue-lock acquisitions per window of 1/100 of the run.
fn lock_panel(r: &RunRecord) -> Panel {
    let s = r.series.as_ref().expect("series");
    let w = (s.times_ns.len() / 100).max(1);
    let mut pts = Vec::new();
    let mut i = 0;
    while i + w < s.times_ns.len() {
        let acq = s.rq_lock_acquisitions[i + w] - s.rq_lock_acquisitions[i];
        let cont = s.rq_lock_contended[i + w] - s.rq_lock_contended[i];
        let pct = if acq == 0 { 0.0 } else { cont as f64 * 100.0 / acq as f64 };
        pts.push((secs(s.times_ns[i + w]), pct));
        i += w;
    }
    let lines = vec![Line { name: "rq locks".into(), group: "rq locks".into(), pts }];
    Panel { scheduler: sched(r), lines, y_range: None }
}

fn stat_panel(r: &RunRecord, name: &str) -> Panel {
    let s = r.series.as_ref().expect("series");
    let lines = r
        .tasks
        .iter()
        .filter_map(|t| {
            let pts: Vec<(f64, f64)> =
                s.stat(t.tid, name).into_iter().map(|(time, v)| (secs(time), v as f64)).collect();
            (!pts.is_empty()).then(|| Line {
                name: t.name.clone(),
                group: group_of(&t.name).to_string(),
                pts: thin(pts),
            })
        })
        .collect();
    Panel { scheduler: sched(r), lines, y_range: None }
}

fn figure(file: &str, title: &str, xdesc: &str, ydesc: &str, panels: Vec<Panel>) -> Result<Figure, String> {
    let panels: Vec<Panel> = panels.into_iter().map(thin_panel).collect();
    let (w, h) = size(panels.len());
    let mut svg = String::new();
    draw(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), title, xdesc, ydesc, &panels)?;
    let meta: Vec<MetaPanel> = panels
        .iter()
        .map(|p| MetaPanel {
            scheduler: p.scheduler.clone(),
            series: p
                .lines
                .iter()
                .map(|l| MetaSeries {
                    name: l.name.clone(),
                    points: l.pts.len(),
                    last: l.pts.last().map_or(0.0, |x| x.1),
                })
                .collect(),
        })
        .collect();
    let json = serde_json::to_string(&meta).map_err(|e| e.to_string())?;
    let json = json.replace('&', "&amp;").replace('<', "&lt;");
    if let Some(end) = svg.find('>') {
        svg.insert_str(end + 1, &format!("\n<metadata id=\"schedlab-data\">{json}</metadata>"));
    }
    Ok(Figure {
        name: file.to_string(),
        title: title.to_string(),
        svg,
        xdesc: xdesc.to_string(),
        ydesc: ydesc.to_string(),
        panels,
    })
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot: {e:?}")
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    xdesc: &str,
    ydesc: &str,
) -> Result<(), String> {
    let pts = p.lines.iter().flat_map(|l| l.pts.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if let Some((a, b)) = p.y_range {
        (y0, y1) = (a, b);
    }
    if y1 - y0 < 1e-9 {
        y1 = y0 + 1.0;
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    let pad = if p.y_range.is_some() { 0.0 } else { (y1 - y0) * 0.05 };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.scheduler, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, (y0 - if y0 < 0.0 { pad } else { 0.0 })..(y1 + pad))
        .map_err(err)?;
    chart.configure_mesh().x_desc(xdesc).y_desc(ydesc).light_line_style(WHITE.mix(0.0)).draw().map_err(err)?;
    let many = p.lines.len() > MAX_LEGEND;
    let mut groups: Vec<&str> = Vec::new();
    for (i, l) in p.lines.iter().enumerate() {
        let gi = match groups.iter().position(|g| *g == l.group) {
            Some(g) => g,
            None => {
                groups.push(&l.group);
                groups.len() - 1
            }
        };
        let color = Palette99::pick(if many { gi } else { i }).to_rgba();
        let style = ShapeStyle {
            color: if many { color.mix(0.5) } else { color },
            filled: false,
            stroke_width: if many { 1 } else { 2 },
        };
        let s = chart.draw_series(LineSeries::new(l.pts.iter().copied(), style)).map_err(err)?;
        // Many lines: one legend entry per group (its first line); when every line is its
        // own group (one per CPU), a single entry says how many there are.
        let singletons = many && p.lines.iter().all(|x| p.lines.iter().filter(|y| y.group == x.group).count() == 1);
        let first_of_group = p.lines.iter().find(|x| x.group == l.group).is_some_and(|x| std::ptr::eq(x, l));
        let label = if !many {
            Some(l.name.clone())
        } else if singletons {
            (i == 0).then(|| format!("one line per series ({})", p.lines.len()))
        } else if first_of_group {
            let n = p.lines.iter().filter(|x| x.group == l.group).count();
            Some(if n > 1 { format!("{} (×{n})", l.group) } else { l.group.clone() })
        } else {
            None
        };
        if let Some(label) = label {
            s.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        }
    }
    if !p.lines.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(err)?;
    }
    Ok(())
}
