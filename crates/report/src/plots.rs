//! SVG figures from runs with a recorded series, modelled on the ULE-vs-CFS paper's:
//! cumulative run time per thread (Fig. 1, 3), the interactivity penalty per thread
//! (Fig. 2, 4), threads per core (Fig. 6, 7); plus every other per-task policy statistic
//! (CFS vruntime, lag, slice), per-CPU utilisation and the wakeup-latency CDF. With several
//! runs, each figure has one panel per scheduler, side by side.
//!
//! Every SVG carries its data's summary in `<metadata id="schedlab-data">` (JSON: per panel,
//! per series, the name, number of points and last value), so tests and tools can check a
//! figure without parsing its drawing.

//! SVG figures from runs with a recorded series, modelled on the ULE-vs-CFS paper's:
//! cumulative run time per thread (Fig. 1, 3), the interactivity penalty per thread
//! (Fig. 2, 4), threads per core (Fig. 6, 7; a per-CPU heat map beyond 8 CPUs); plus every
//! other per-task policy statistic (CFS vruntime, lag, slice), per-CPU utilisation and the
//! wakeup-latency CDF (log time axis). With several runs, each figure has one panel per
//! scheduler, side by side, on one x and one y scale. Studies draw their papers' figures
//! with [`Chart`] (lines over a swept parameter, or grouped bars).
//!
//! Style rules every figure follows: durations labelled in ns/µs/ms/s (never raw ns); label
//! areas sized to their labels; the legend in a column right of the data; crowded
//! per-thread panels draw groups faded and the few tasks of their own group on top; by
//! default only figures that carry information ([`figures`] skips those whose every series
//! is one constant, e.g. all zero; [`figures_all`] keeps them).
//!
//! Every SVG carries its data's summary in `<metadata id="schedlab-data">` (JSON: per panel,
//! its title as `scheduler`, the axes' scales and units, and per series the name, number of
//! points and last value in the axis' unit — ns for durations), so tests and tools can check
//! a figure without parsing its drawing.

pub mod axis;
mod draw;
mod heatmap;

pub use axis::{Axis, Unit};

use crate::study::group_of;
use heatmap::Heat;
use plotters::prelude::*;
use schedlab_metrics::RunRecord;
use serde::Serialize;

/// One figure: file name (`runtime.svg`), title and SVG text; [`Figure::png`] renders the
/// same drawing as PNG.
pub struct Figure {
    pub name: String,
    pub title: String,
    pub svg: String,
    body: Body,
}

/// The font figures are measured and rendered with (DejaVu Sans, vendored: no system fonts,
/// the same pixels on every host). SVG text names `sans-serif` and leaves the font to the
/// viewer; PNG and PDF render it in this font.
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

impl Figure {
    /// The figure as a PNG image at `dpi` dots per inch, rendered from the SVG itself
    /// (resvg), so SVG, PNG and PDF are one drawing. The SVG's user units are CSS pixels,
    /// 96 to the inch: a 640 × 480 figure at 300 DPI is 2000 × 1500 pixels.
    pub fn png(&self, dpi: u32) -> Result<Vec<u8>, String> {
        if !(MIN_DPI..=MAX_DPI).contains(&dpi) {
            return Err(format!("png: {dpi} DPI is outside {MIN_DPI}..={MAX_DPI}"));
        }
        let tree = self.tree()?;
        let scale = dpi as f32 / CSS_DPI;
        let size = tree.size().to_int_size().scale_by(scale).ok_or_else(|| format!("png: {}: no size", self.name))?;
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| format!("png: {}: {}x{} pixels", self.name, size.width(), size.height()))?;
        resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
        pixmap.encode_png().map_err(|e| format!("png: {e}"))
    }

    /// The figure as a one-page vector PDF (svg2pdf) of the SVG's physical size, its text
    /// in the vendored font, embedded as a subset.
    pub fn pdf(&self) -> Result<Vec<u8>, String> {
        let tree = self.tree()?;
        let page = svg2pdf::PageOptions { dpi: CSS_DPI };
        svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), page).map_err(|e| format!("pdf: {e}"))
    }

    /// The SVG parsed and laid out (text shaped with the vendored font, as the SVG was
    /// measured): what PNG and PDF render, and what tests measure text extents on.
    pub fn tree(&self) -> Result<svg2pdf::usvg::Tree, String> {
        svg2pdf::usvg::Tree::from_str(&self.svg, &usvg_options()).map_err(|e| format!("{}: {e}", self.name))
    }

    /// What a reader would send back about the layout: every text whose laid-out extent
    /// leaves the canvas (by more than half a pixel) and every two texts that overlap (by
    /// more than a pixel each way), with their extents. Empty for a good figure.
    pub fn layout_faults(&self) -> Result<Vec<String>, String> {
        let tree = self.tree()?;
        let (w, h) = (tree.size().width(), tree.size().height());
        let mut texts: Vec<(String, svg2pdf::usvg::Rect)> = Vec::new();
        let mut stack: Vec<&svg2pdf::usvg::Group> = vec![tree.root()];
        while let Some(g) = stack.pop() {
            for node in g.children() {
                match node {
                    svg2pdf::usvg::Node::Group(child) => stack.push(child),
                    svg2pdf::usvg::Node::Text(t) => {
                        texts.push((t.chunks().iter().map(|c| c.text()).collect(), t.abs_bounding_box()))
                    }
                    _ => {}
                }
            }
        }
        let span = |b: &svg2pdf::usvg::Rect| {
            format!("x {:.0}..{:.0}, y {:.0}..{:.0}", b.left(), b.right(), b.top(), b.bottom())
        };
        let mut out = Vec::new();
        for (i, (text, b)) in texts.iter().enumerate() {
            if b.left() < -0.5 || b.top() < -0.5 || b.right() > w + 0.5 || b.bottom() > h + 0.5 {
                out.push(format!("`{text}` ({}) leaves the {w:.0} x {h:.0} canvas", span(b)));
            }
            for (other, c) in &texts[i + 1..] {
                let dx = b.right().min(c.right()) - b.left().max(c.left());
                let dy = b.bottom().min(c.bottom()) - b.top().max(c.top());
                if dx > 1.0 && dy > 1.0 {
                    out.push(format!("`{text}` ({}) overlaps `{other}` ({})", span(b), span(c)));
                }
            }
        }
        Ok(out)
    }

    /// The PNG file name (`runtime.png`).
    pub fn png_name(&self) -> String {
        self.name.trim_end_matches(".svg").to_string() + ".png"
    }

    /// The PDF file name (`runtime.pdf`).
    pub fn pdf_name(&self) -> String {
        self.name.trim_end_matches(".svg").to_string() + ".pdf"
    }

    /// Whether anything is drawn: a line of two points or more (or one marked), a heat
    /// map's cell, a bar. A figure of a run shorter than its sampling interval may have
    /// nothing else; the caller warns.
    pub fn drawn(&self) -> bool {
        self.body.panels.iter().any(|p| match &p.content {
            Content::Lines(ls) => ls.iter().any(|l| l.pts.len() >= 2 || (l.markers && !l.pts.is_empty())),
            Content::Heat(h) => h.rows.iter().any(|r| !r.is_empty()),
            Content::Bars { series, .. } => series.iter().any(|(_, v)| v.iter().any(Option::is_some)),
        })
    }

    /// Whether the figure shows anything: some series is not one constant shared by all.
    pub fn informative(&self) -> bool {
        let mut seen: Option<f64> = None;
        for p in &self.body.panels {
            for v in p.content.values() {
                match seen {
                    None => seen = Some(v),
                    Some(s) if (s - v).abs() > 1e-12 * s.abs().max(1.0) => return true,
                    _ => {}
                }
            }
        }
        false
    }
}

/// CSS pixels per inch: the SVG's unit.
const CSS_DPI: f32 = 96.0;
/// The PNG resolution when none is asked for: print quality.
pub const DEFAULT_DPI: u32 = 300;
/// The resolutions a PNG may be asked for (1200 DPI of a 1920-pixel-wide figure is a
/// 24 000-pixel image: beyond that, ask for the PDF).
pub const MIN_DPI: u32 = 24;
pub const MAX_DPI: u32 = 1200;

/// usvg's options with only the vendored font, as every family (no system fonts: the same
/// pixels on every host).
fn usvg_options() -> svg2pdf::usvg::Options<'static> {
    static FONTS: std::sync::OnceLock<std::sync::Arc<svg2pdf::usvg::fontdb::Database>> = std::sync::OnceLock::new();
    let fonts = FONTS.get_or_init(|| {
        let mut db = svg2pdf::usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        for set in [
            svg2pdf::usvg::fontdb::Database::set_sans_serif_family,
            svg2pdf::usvg::fontdb::Database::set_serif_family,
            svg2pdf::usvg::fontdb::Database::set_monospace_family,
        ] {
            set(&mut db, "DejaVu Sans");
        }
        std::sync::Arc::new(db)
    });
    svg2pdf::usvg::Options { fontdb: fonts.clone(), font_family: "DejaVu Sans".into(), ..Default::default() }
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

/// What a figure draws: title, an optional note under it, the axes all panels share, panels.
pub(crate) struct Body {
    title: String,
    note: Option<String>,
    x: Axis,
    y: Axis,
    panels: Vec<Panel>,
}

/// One panel (usually one scheduler's run).
pub(crate) struct Panel {
    title: String,
    content: Content,
}

pub(crate) enum Content {
    Lines(Vec<Line>),
    Heat(Heat),
    /// Grouped bars: categories along x, one bar per series in each.
    Bars {
        categories: Vec<String>,
        series: Vec<(String, Vec<Option<f64>>)>,
    },
}

/// A line to draw: name, group (for colouring many lines), points in the axes' units, and
/// whether it is drawn on top (thick) in a crowded panel.
pub(crate) struct Line {
    name: String,
    group: String,
    pts: Vec<(f64, f64)>,
    highlight: bool,
    /// A marker at every point (study figures: each point is a run).
    markers: bool,
}

impl Line {
    fn new(name: &str, group: &str, pts: Vec<(f64, f64)>) -> Line {
        Line { name: name.to_string(), group: group.to_string(), pts, highlight: false, markers: false }
    }
}

impl Content {
    /// Drawing positions of the data (for the shared ranges).
    fn positions(&self, x: &Axis, y: &Axis) -> Vec<(f64, f64)> {
        match self {
            Content::Lines(ls) => {
                ls.iter().flat_map(|l| l.pts.iter()).filter_map(|&(a, b)| Some((x.pos(a)?, y.pos(b)?))).collect()
            }
            Content::Heat(h) => h.positions(x),
            Content::Bars { series, .. } => {
                series.iter().flat_map(|(_, v)| v.iter().flatten()).filter_map(|&b| Some((0.0, y.pos(b)?))).collect()
            }
        }
    }

    /// Every data value (for [`Figure::informative`]).
    fn values(&self) -> Vec<f64> {
        match self {
            Content::Lines(ls) => ls.iter().flat_map(|l| l.pts.iter().map(|p| p.1)).collect(),
            Content::Heat(h) => h.rows.iter().flat_map(|r| r.iter().map(|c| c.2)).collect(),
            Content::Bars { series, .. } => series.iter().flat_map(|(_, v)| v.iter().flatten().copied()).collect(),
        }
    }

    fn legend(&self) -> Vec<draw::Entry> {
        match self {
            Content::Lines(ls) => line_legend(ls),
            Content::Heat(h) => h.legend(),
            Content::Bars { series, .. } => series
                .iter()
                .enumerate()
                .map(|(i, (n, _))| draw::Entry { text: n.clone(), color: series_color(i), dash: 0, swatch: true })
                .collect(),
        }
    }
}

/// Above this many lines a panel colours by group, lists groups in the legend and
/// highlights the tasks of small groups.
const MAX_LEGEND: usize = 12;
/// A group of at most this many tasks is highlighted in a crowded panel (fibo among 80
/// sysbench workers).
const HIGHLIGHT_MAX: usize = 3;
/// Above this many CPUs, threads per CPU is a heat map.
pub const HEAT_MAP_CPUS: usize = 8;
/// Points kept per line; lines of crowded panels keep fewer.
const MAX_POINTS: usize = 600;
const MAX_POINTS_CROWDED: usize = 120;

/// Okabe and Ito's palette ("Color Universal Design", 2008): eight colours told apart
/// under every common colour-vision deficiency and in grey print; black last, since the
/// axes are black.
const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xF0, 0xE4, 0x42), // yellow
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x00, 0x00, 0x00), // black
];
/// Line styles after the eight colours: solid, dashed, dotted (then again).
const DASHES: usize = 3;

/// The colour of series `i` of a figure (lines and bars alike).
pub(crate) fn series_color(i: usize) -> RGBAColor {
    OKABE_ITO[i % OKABE_ITO.len()].to_rgba()
}

/// The line style of series `i`: 0 solid for the first eight, then dashed, then dotted.
fn series_dash(i: usize) -> usize {
    (i / OKABE_ITO.len()) % DASHES
}

/// A line's series index: its own, or its group's in a crowded panel.
fn line_index(lines: &[Line], l: &Line) -> usize {
    let crowded = lines.len() > MAX_LEGEND;
    let idx = if crowded {
        let mut groups: Vec<&str> = Vec::new();
        for x in lines {
            if !groups.contains(&x.group.as_str()) {
                groups.push(&x.group);
            }
        }
        groups.iter().position(|g| *g == l.group).unwrap_or(0)
    } else {
        lines.iter().position(|x| std::ptr::eq(x, l)).unwrap_or(0)
    };
    idx
}

/// A line's colour and style.
pub(crate) fn line_style(lines: &[Line], l: &Line) -> (RGBAColor, usize) {
    let i = line_index(lines, l);
    (series_color(i), series_dash(i))
}

/// Legend entries: every line, or in a crowded panel the highlighted lines by name and the
/// other groups once each (with their size); lines that are each their own group (one per
/// CPU) get a single entry saying how many there are.
fn line_legend(lines: &[Line]) -> Vec<draw::Entry> {
    let entry = |text: String, l: &Line| {
        let (color, dash) = line_style(lines, l);
        draw::Entry { text, color, dash, swatch: false }
    };
    if lines.len() <= MAX_LEGEND {
        return lines.iter().map(|l| entry(l.name.clone(), l)).collect();
    }
    let count = |g: &str| lines.iter().filter(|x| x.group == g).count();
    if lines.iter().all(|l| count(&l.group) == 1) {
        return vec![entry(format!("{} lines", lines.len()), &lines[0])];
    }
    let mut out: Vec<draw::Entry> = lines.iter().filter(|l| l.highlight).map(|l| entry(l.name.clone(), l)).collect();
    let mut done: Vec<&str> = Vec::new();
    for l in lines.iter().filter(|l| !l.highlight) {
        if !done.contains(&l.group.as_str()) {
            done.push(&l.group);
            let n = count(&l.group);
            out.push(entry(if n > 1 { format!("{} (×{n})", l.group) } else { l.group.clone() }, l));
        }
    }
    out
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
    kind: &'static str,
    x_scale: &'static str,
    y_scale: &'static str,
    x_unit: &'static str,
    y_unit: &'static str,
    /// The drawn ranges, in drawing positions (log10 of the value on a log axis): the same
    /// for every panel of a figure.
    x_range: (f64, f64),
    y_range: (f64, f64),
    series: Vec<MetaSeries>,
}

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

/// Crowded panels get fewer points per line, and the tasks of small groups highlighted.
fn crowded(mut p: Panel) -> Panel {
    if let Content::Lines(lines) = &mut p.content {
        if lines.len() > MAX_LEGEND {
            let sizes: Vec<usize> = lines.iter().map(|l| lines.iter().filter(|x| x.group == l.group).count()).collect();
            // Only when some groups are big: one line per CPU has nothing to single out.
            let big = sizes.iter().any(|&n| n > HIGHLIGHT_MAX);
            for (l, n) in lines.iter_mut().zip(sizes) {
                l.pts = thin_to(std::mem::take(&mut l.pts), MAX_POINTS_CROWDED);
                l.highlight = big && n <= HIGHLIGHT_MAX;
            }
        }
    }
    p
}

fn t(ns: u64) -> f64 {
    ns as f64
}

/// The figures of the runs that carry information (see [`Figure::informative`]).
pub fn figures(rs: &[RunRecord]) -> Result<Vec<Figure>, String> {
    Ok(figures_all(rs)?.into_iter().filter(Figure::informative).collect())
}

/// Every figure the runs support (runs without a series give only the latency CDF).
pub fn figures_all(rs: &[RunRecord]) -> Result<Vec<Figure>, String> {
    register_font();
    let mut out = Vec::new();
    let with: Vec<&RunRecord> = rs.iter().filter(|r| r.series.is_some()).collect();
    let time = || Axis::new("time", Unit::Ns);
    if !with.is_empty() {
        let panels = with.iter().map(|r| runtime_panel(r)).collect();
        let y = Axis::new("run time", Unit::Ns);
        out.push(figure("runtime.svg", "Cumulative run time per thread", time(), y, panels)?);
        out.push(threads_per_cpu(&with)?);
        let panels = with.iter().map(|r| lock_panel(r)).collect();
        let y = Axis::new("contended acquisitions", Unit::Percent);
        out.push(figure("rq-lock-contention.svg", "Runqueue-lock contention over time", time(), y, panels)?);
        let panels = with.iter().map(|r| util_panel(r)).collect();
        let y = Axis::new("busy", Unit::Percent).fixed(0.0, 100.0);
        out.push(figure("cpu-utilisation.svg", "CPU utilisation", time(), y, panels)?);
        out.extend(stat_figures(&with)?);
    }
    let lines: Vec<Line> = rs
        .iter()
        .filter(|r| !r.latency_cdf.is_empty())
        .map(|r| Line::new(&sched(r), &sched(r), r.latency_cdf.iter().map(|&(ns, q)| (t(ns), q * 100.0)).collect()))
        .collect();
    if !lines.is_empty() {
        let panel = Panel { title: "all schedulers".into(), content: Content::Lines(lines) };
        let x = Axis::new("latency (log scale)", Unit::Ns).log();
        let y = Axis::new("wakeups within", Unit::Percent).fixed(0.0, 100.0);
        out.push(figure("latency-cdf.svg", "Wakeup latency CDF (waking → running)", x, y, vec![panel])?);
    }
    Ok(out)
}

/// Threads per CPU: one line per CPU up to [`HEAT_MAP_CPUS`] CPUs, a heat map beyond.
fn threads_per_cpu(with: &[&RunRecord]) -> Result<Figure, String> {
    let title = "Threads per CPU (runnable, incl. running)";
    let x = Axis::new("time", Unit::Ns);
    if with.iter().all(|r| r.machine.cpus <= HEAT_MAP_CPUS) {
        let panels = with.iter().map(|r| cpu_panel(r)).collect();
        return figure("threads-per-cpu.svg", title, x, Axis::new("threads", Unit::Plain), panels);
    }
    let panels = with
        .iter()
        .map(|r| {
            let s = r.series.as_ref().expect("filtered");
            let per_cpu: Vec<Vec<f64>> =
                s.cpu_runnable.iter().map(|v| v.iter().map(|&x| f64::from(x)).collect()).collect();
            Panel { title: sched(r), content: Content::Heat(Heat::new(&s.times_ns, &per_cpu, r.sim_ns)) }
        })
        .collect();
    figure("threads-per-cpu.svg", &format!("{title}, per CPU"), x, Axis::new("CPU", Unit::Plain), panels)
}

/// One figure per policy statistic and unit, as each run's series declares them (the
/// policy's `Stat::unit` and `Stat::caption`): only the runs whose policy has it, and a
/// statistic whose unit differs between policies (CFS's slice in ns, ULE's in stat ticks)
/// gets one figure per unit, so panels side by side share a scale.
fn stat_figures(with: &[&RunRecord]) -> Result<Vec<Figure>, String> {
    // (name, unit, caption): names in order of appearance, ns first among a name's units.
    let mut stats: Vec<(String, String, String)> = Vec::new();
    for r in with {
        let s = r.series.as_ref().expect("filtered");
        for (k, n) in s.stat_names.iter().enumerate() {
            let unit = s.stat_units.get(k).cloned().unwrap_or_default();
            if !stats.iter().any(|(m, u, _)| m == n && *u == unit) {
                stats.push((n.clone(), unit, s.stat_captions.get(k).cloned().unwrap_or_default()));
            }
        }
    }
    let first: Vec<String> = stats.iter().map(|(n, _, _)| n.clone()).collect();
    stats.sort_by_key(|(n, u, _)| (first.iter().position(|m| m == n), u != "ns"));
    let mut out = Vec::new();
    for (n, unit, caption) in stats {
        let panels: Vec<Panel> = with
            .iter()
            .filter(|r| stat_unit_of(r, &n).as_deref() == Some(unit.as_str()))
            .map(|r| stat_panel(r, &n))
            .filter(|p| matches!(&p.content, Content::Lines(l) if !l.is_empty()))
            .collect();
        if panels.is_empty() {
            continue;
        }
        let (axis, file, desc) = match unit.as_str() {
            "ns" => (Unit::Ns, format!("stat-{n}.svg"), n.clone()),
            "" => (Unit::Plain, format!("stat-{n}.svg"), n.clone()),
            "%" => (Unit::Percent, format!("stat-{n}-percent.svg"), n.clone()),
            u if u.contains("tick") => (Unit::Plain, format!("stat-{n}-ticks.svg"), u.to_string()),
            u => {
                (Unit::Plain, format!("stat-{n}-{}.svg", u.replace(|c: char| !c.is_alphanumeric(), "")), u.to_string())
            }
        };
        let title = if caption.is_empty() { format!("{n} per thread") } else { caption };
        out.push(figure(&file, &title, Axis::new("time", Unit::Ns), Axis::new(&desc, axis), panels)?);
    }
    Ok(out)
}

/// The unit run `r`'s policy gives statistic `n`, if it reports it.
fn stat_unit_of(r: &RunRecord, n: &str) -> Option<String> {
    let s = r.series.as_ref()?;
    let k = s.stat_names.iter().position(|m| m == n)?;
    Some(s.stat_units.get(k).cloned().unwrap_or_default())
}

fn runtime_panel(r: &RunRecord) -> Panel {
    let s = r.series.as_ref().expect("series");
    let lines = r
        .tasks
        .iter()
        .map(|tk| {
            let first = s.first.get(tk.tid).copied().unwrap_or(0);
            let mut pts: Vec<(f64, f64)> = s
                .runtime_ns
                .get(tk.tid)
                .map(|v| v.iter().enumerate().map(|(i, &x)| (t(s.times_ns[first + i]), x as f64)).collect())
                .unwrap_or_default();
            // Start at none at the task's start (it may precede the first sample, which a
            // run shorter than the interval has none after), end at the exact total (the
            // last sample may precede the end or the exit).
            if pts.first().is_none_or(|p| p.0 > t(tk.start_ns)) {
                pts.insert(0, (t(tk.start_ns), 0.0));
            }
            pts.push((t(tk.exit_ns.unwrap_or(r.sim_ns)), tk.runtime_ns as f64));
            Line::new(&tk.name, group_of(&tk.name), thin(pts))
        })
        .collect();
    Panel { title: sched(r), content: Content::Lines(lines) }
}

fn cpu_panel(r: &RunRecord) -> Panel {
    let s = r.series.as_ref().expect("series");
    let lines = (0..s.cpu_runnable.len())
        .map(|c| {
            let pts = s.times_ns.iter().zip(&s.cpu_runnable[c]).map(|(&tm, &v)| (t(tm), f64::from(v))).collect();
            Line::new(&format!("cpu{c}"), &format!("cpu{c}"), thin(pts))
        })
        .collect();
    Panel { title: sched(r), content: Content::Lines(lines) }
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
                    (t(s.times_ns[(i * w).min(s.times_ns.len() - 1)]), busy * 100.0)
                })
                .collect();
            Line::new(&format!("cpu{c}"), &format!("cpu{c}"), pts)
        })
        .collect();
    Panel { title: sched(r), content: Content::Lines(lines) }
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
        pts.push((t(s.times_ns[i + w]), pct));
        i += w;
    }
    Panel { title: sched(r), content: Content::Lines(vec![Line::new("rq locks", "rq locks", pts)]) }
}

fn stat_panel(r: &RunRecord, name: &str) -> Panel {
    let s = r.series.as_ref().expect("series");
    let lines = r
        .tasks
        .iter()
        .filter_map(|tk| {
            let pts: Vec<(f64, f64)> = s.stat(tk.tid, name).into_iter().map(|(tm, v)| (t(tm), v as f64)).collect();
            (!pts.is_empty()).then(|| Line::new(&tk.name, group_of(&tk.name), thin(pts)))
        })
        .collect();
    Panel { title: sched(r), content: Content::Lines(lines) }
}

fn figure(file: &str, title: &str, x: Axis, y: Axis, panels: Vec<Panel>) -> Result<Figure, String> {
    let body = Body { title: title.to_string(), note: None, x, y, panels: panels.into_iter().map(crowded).collect() };
    render(file, body)
}

/// Draws `body` as SVG with its data summary.
fn render(file: &str, body: Body) -> Result<Figure, String> {
    register_font();
    let (w, h) = size(body.panels.len());
    let mut svg = String::new();
    draw::figure(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), &body)?;
    let meta: Vec<MetaPanel> = body.panels.iter().map(|p| meta_panel(p, &body)).collect();
    let json = serde_json::to_string(&meta).map_err(|e| e.to_string())?;
    let json = json.replace('&', "&amp;").replace('<', "&lt;");
    if let Some(end) = svg.find('>') {
        svg.insert_str(end + 1, &format!("\n<metadata id=\"schedlab-data\">{json}</metadata>"));
    }
    Ok(Figure { name: file.to_string(), title: body.title.clone(), svg, body })
}

fn meta_panel(p: &Panel, body: &Body) -> MetaPanel {
    let ranges = draw::shared_ranges(body);
    let one = |name: &str, v: &[f64]| MetaSeries {
        name: name.to_string(),
        points: v.len(),
        last: v.last().copied().unwrap_or(0.0),
    };
    let (kind, series) = match &p.content {
        Content::Lines(ls) => {
            ("lines", ls.iter().map(|l| one(&l.name, &l.pts.iter().map(|x| x.1).collect::<Vec<_>>())).collect())
        }
        Content::Heat(h) => (
            "heatmap",
            h.rows
                .iter()
                .enumerate()
                .map(|(c, r)| one(&format!("cpu{c}"), &r.iter().map(|x| x.2).collect::<Vec<_>>()))
                .collect(),
        ),
        Content::Bars { series, .. } => (
            "bars",
            series.iter().map(|(n, v)| one(n, &v.iter().map(|x| x.unwrap_or(0.0)).collect::<Vec<_>>())).collect(),
        ),
    };
    MetaPanel {
        scheduler: p.title.clone(),
        kind,
        x_scale: body.x.scale(),
        y_scale: body.y.scale(),
        x_unit: body.x.unit.name(),
        y_unit: body.y.unit.name(),
        x_range: ranges.0,
        y_range: ranges.1,
        series,
    }
}

/// A study's figure: lines over a swept parameter, or grouped bars over categories; one
/// panel per experiment (or machine, kernel…), all on one scale.
pub struct Chart {
    /// File name (`gain.svg`).
    pub name: String,
    pub title: String,
    /// A line under the title (what was held fixed, where the scales differ).
    pub note: Option<String>,
    pub x: Axis,
    pub y: Axis,
    pub panels: Vec<ChartPanel>,
}

pub struct ChartPanel {
    pub title: String,
    pub data: ChartData,
}

pub enum ChartData {
    /// Named series of `(x, y)` points.
    Lines(Vec<(String, Vec<(f64, f64)>)>),
    /// Categories along x; one bar per series in each (`None`: no value).
    Bars { categories: Vec<String>, series: Vec<(String, Vec<Option<f64>>)> },
}

impl Chart {
    /// Draws the chart (the x axis of bar charts is the categories).
    pub fn render(self) -> Result<Figure, String> {
        let panels = self
            .panels
            .into_iter()
            .map(|p| Panel {
                title: p.title,
                content: match p.data {
                    ChartData::Lines(v) => Content::Lines(
                        v.into_iter().map(|(n, pts)| Line { markers: true, ..Line::new(&n, &n, pts) }).collect(),
                    ),
                    ChartData::Bars { categories, series } => Content::Bars { categories, series },
                },
            })
            .collect();
        render(&self.name, Body { title: self.title, note: self.note, x: self.x, y: self.y, panels })
    }
}
