//! Drawing a figure's panels on any plotters backend (SVG, or a bitmap for PNG): one shared
//! x and y scale across side-by-side panels, tick labels from [`Axis`] (units, never raw
//! ns), label areas sized to their longest label, and the legend in its own column right of
//! the data, never over it.

use super::axis::{label_px, Axis};
use super::{Body, Content, Line, Panel};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// Width of the legend column right of each panel's plot.
const LEGEND_W: u32 = 150;
/// Legend text is cut to this many characters.
const LEGEND_CHARS: usize = 17;

pub(super) fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot: {e:?}")
}

/// A legend entry: text, colour, and whether it is a filled swatch (heat map, bars) or a line.
pub(super) struct Entry {
    pub text: String,
    pub color: RGBAColor,
    /// The line style (`super::series_dash`).
    pub dash: usize,
    pub swatch: bool,
}

/// Draws the whole figure: title, an optional note under it, panels side by side.
pub(super) fn figure<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, body: &Body) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let root = titled(root, &body.title)?;
    let root = match &body.note {
        Some(note) => {
            root.draw_text(note, &("sans-serif", 13).into_font().color(&BLACK.mix(0.7)), (10, 2)).map_err(err)?;
            root.margin(18, 0, 0, 0)
        }
        None => root,
    };
    let (xr, yr) = shared_ranges(body);
    let areas = root.split_evenly((1, body.panels.len().max(1)));
    for (area, p) in areas.iter().zip(&body.panels) {
        panel(area, p, body, xr, yr)?;
    }
    root.present().map_err(err)
}

/// Title sizes tried in turn until the title fits on one line; at the last it wraps.
const TITLE_SIZES: [u32; 3] = [20, 18, 16];
/// Pixels kept free left and right of a title.
const TITLE_MARGIN: u32 = 12;

/// Draws `title` centred at the top in the largest of [`TITLE_SIZES`] at which it fits the
/// width, else wrapped over lines at the smallest, and returns the area below it: a title
/// is never clipped.
fn titled<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, title: &str) -> Result<DrawingArea<DB, Shift>, String> {
    let (w, _) = root.dim_in_pixel();
    let avail = w.saturating_sub(2 * TITLE_MARGIN);
    let width = |text: &str, size: u32| -> Result<u32, String> {
        root.estimate_text_size(text, &("sans-serif", size as f64).into_font().into_text_style(&root))
            .map(|(tw, _)| tw)
            .map_err(err)
    };
    for size in TITLE_SIZES {
        if width(title, size)? <= avail {
            return root.titled(title, ("sans-serif", size)).map_err(err);
        }
    }
    let size = TITLE_SIZES[TITLE_SIZES.len() - 1];
    let mut lines: Vec<String> = Vec::new();
    for word in title.split_whitespace() {
        let joined = lines.last().map(|l| format!("{l} {word}"));
        match joined {
            Some(j) if width(&j, size)? <= avail => *lines.last_mut().expect("a line") = j,
            _ => lines.push(word.to_string()),
        }
    }
    let style =
        ("sans-serif", size as f64).into_font().into_text_style(&root).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    let line_h = size as i32 + 4;
    for (i, line) in lines.iter().enumerate() {
        root.draw_text(line, &style, (w as i32 / 2, 4 + line_h * i as i32)).map_err(err)?;
    }
    Ok(root.margin(4 + line_h as u32 * lines.len() as u32 + 4, 0, 0, 0))
}

/// The drawn x and y ranges, the same for every panel so side-by-side panels compare.
pub(super) fn shared_ranges(body: &Body) -> ((f64, f64), (f64, f64)) {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for p in &body.panels {
        for (x, y) in p.content.positions(&body.x, &body.y) {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
    }
    if let Content::Bars { categories, .. } = &body.panels.first().map_or(&Content::Lines(Vec::new()), |p| &p.content) {
        (x0, x1) = (0.0, categories.len().max(1) as f64);
        y0 = y0.min(0.0);
    }
    let xr = match &body.panels.first().map(|p| &p.content) {
        Some(Content::Bars { .. }) => (x0, x1),
        _ => body.x.range(x0, x1),
    };
    (xr, body.y.range(y0, y1))
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    body: &Body,
    xr: (f64, f64),
    yr: (f64, f64),
) -> Result<(), String> {
    let entries = p.content.legend();
    let (w, _) = area.dim_in_pixel();
    let (plot, legend) = if entries.is_empty() { (area.clone(), None) } else { split(area, w) };
    let xt = match &p.content {
        Content::Bars { categories, .. } => (0..categories.len()).map(|i| i as f64 + 0.5).collect(),
        _ => body.x.ticks(xr.0, xr.1),
    };
    let yt = body.y.ticks(yr.0, yr.1);
    let xlabel = |v: &f64| match &p.content {
        Content::Bars { categories, .. } => categories.get(v.floor().max(0.0) as usize).cloned().unwrap_or_default(),
        _ => body.x.label(*v),
    };
    let ylabel = |v: &f64| body.y.label(*v);
    let yw = yt.iter().map(|v| label_px(&ylabel(v))).max().unwrap_or(30) + 22;
    // Category labels wider than their slot alternate between two rows, drawn below.
    let stagger = match &p.content {
        Content::Bars { categories, .. } => {
            let slot = plot.dim_in_pixel().0.saturating_sub(yw + 28) / categories.len().max(1) as u32;
            let font = ("sans-serif", TICK_FONT).into_font().into_text_style(&plot);
            let widest = categories.iter().map(|c| plot.estimate_text_size(c, &font).map_or(0, |(w, _)| w)).max();
            widest.unwrap_or(0) + 4 > slot
        }
        _ => false,
    };
    let xlabel = |v: &f64| if stagger { String::new() } else { xlabel(v) };
    let mut chart = ChartBuilder::on(&plot)
        .caption(&p.title, ("sans-serif", 16))
        .margin(10)
        .margin_right(18)
        .x_label_area_size(if stagger { 40 + TICK_FONT as u32 + 4 } else { 40 })
        .y_label_area_size(yw)
        .build_cartesian_2d(Ticked::new(xr, xt), Ticked::new(yr, yt))
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    // Grid lines at category centres would run through the bars.
    if matches!(p.content, Content::Bars { .. }) {
        mesh.disable_x_mesh();
    }
    mesh.x_desc(body.x.desc.as_str())
        .y_desc(body.y.desc.as_str())
        .x_label_formatter(&xlabel)
        .y_label_formatter(&ylabel)
        .label_style(("sans-serif", TICK_FONT))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    if let (true, Content::Bars { categories, .. }) = (stagger, &p.content) {
        staggered_labels(&plot, &chart, categories, yr.0)?;
    }
    let plot_area = chart.plotting_area();
    match &p.content {
        Content::Lines(lines) => draw_lines(plot_area, lines, &body.x, &body.y)?,
        Content::Heat(h) => super::heatmap::draw(plot_area, h, &body.x)?,
        Content::Bars { series, .. } => draw_bars(plot_area, series, &body.y)?,
    }
    if let Some(l) = legend {
        draw_legend(&l, &entries)?;
    }
    Ok(())
}

/// The size of tick and category labels.
const TICK_FONT: f64 = 12.0;

/// Category labels under their bars, even ones on the first row and odd ones on the second,
/// so that neighbours wider than a slot never overlap.
fn staggered_labels<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    plot: &DrawingArea<DB, Shift>,
    chart: &ChartContext<DB, Cartesian2d<X, Y>>,
    categories: &[String],
    y0: f64,
) -> Result<(), String> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let font = ("sans-serif", TICK_FONT).into_font().into_text_style(plot).pos(Pos::new(HPos::Center, VPos::Top));
    let (bx, by) = plot.get_base_pixel();
    for (i, c) in categories.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, y0));
        let row = (i % 2) as i32 * (TICK_FONT as i32 + 4);
        plot.draw_text(c, &font, (x - bx, y - by + 8 + row)).map_err(err)?;
    }
    Ok(())
}

fn split<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    w: u32,
) -> (DrawingArea<DB, Shift>, Option<DrawingArea<DB, Shift>>) {
    let (a, b) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    (a, Some(b))
}

pub(super) type PlotArea<DB> = DrawingArea<DB, plotters::coord::cartesian::Cartesian2d<Ticked, Ticked>>;

/// A linear coordinate with our own tick positions (plotters' `WithKeyPoints` has no
/// label formatter; the labels come from [`Axis::label`]).
pub(super) struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new((lo, hi): (f64, f64), ticks: Vec<f64>) -> Ticked {
        Ticked { lo, hi, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        if self.hi <= self.lo {
            return (limit.0 + limit.1) / 2;
        }
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Lines: crowded panels draw the background groups thin and faded first, then the
/// highlighted lines (the few tasks of their own group) on top, thick.
fn draw_lines<DB: DrawingBackend>(area: &PlotArea<DB>, lines: &[Line], x: &Axis, y: &Axis) -> Result<(), String> {
    let crowded = lines.len() > super::MAX_LEGEND;
    let order = lines.iter().filter(|l| !l.highlight).chain(lines.iter().filter(|l| l.highlight));
    for l in order {
        let (color, dash) = super::line_style(lines, l);
        let faded = crowded && !l.highlight;
        let style = ShapeStyle {
            color: if faded { color.mix(0.45) } else { color },
            filled: false,
            stroke_width: if faded { 1 } else { 2 },
        };
        let pts: Vec<(f64, f64)> = l.pts.iter().filter_map(|&(a, b)| Some((x.pos(a)?, y.pos(b)?))).collect();
        if l.markers {
            for &p in &pts {
                area.draw(&Circle::new(p, 3, color.filled())).map_err(err)?;
            }
        }
        path(area, pts, style, dash)?;
    }
    Ok(())
}

/// A polyline in line style `dash` (0 solid, 1 dashed, 2 dotted).
fn path<DB: DrawingBackend>(
    area: &PlotArea<DB>,
    pts: Vec<(f64, f64)>,
    style: ShapeStyle,
    dash: usize,
) -> Result<(), String> {
    match dash {
        0 => area.draw(&PathElement::new(pts, style)),
        1 => area.draw(&DashedPathElement::new(pts, 7, 4, style)),
        _ => area.draw(&DashedPathElement::new(pts, 2, 3, style)),
    }
    .map_err(err)
}

/// Grouped bars: one group per category, one bar per series.
fn draw_bars<DB: DrawingBackend>(
    area: &PlotArea<DB>,
    series: &[(String, Vec<Option<f64>>)],
    y: &Axis,
) -> Result<(), String> {
    let n = series.len().max(1) as f64;
    let w = 0.8 / n;
    let base = y.pos(y.fixed.map_or(0.0, |f| f.0)).unwrap_or(0.0).max(area.get_y_range().start);
    for (si, (_, vals)) in series.iter().enumerate() {
        let color = super::series_color(si);
        for (ci, v) in vals.iter().enumerate() {
            let Some(top) = v.and_then(|v| y.pos(v)) else { continue };
            let x0 = ci as f64 + 0.1 + si as f64 * w;
            area.draw(&Rectangle::new([(x0, base), (x0 + w * 0.92, top)], color.filled())).map_err(err)?;
        }
    }
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[Entry]) -> Result<(), String> {
    let font = ("sans-serif", 13).into_font();
    let rows = ((area.dim_in_pixel().1.saturating_sub(60)) / 18).max(1) as usize;
    for (i, e) in entries.iter().take(rows).enumerate() {
        let y = 40 + 18 * i as i32;
        if e.swatch {
            area.draw(&Rectangle::new([(4, y - 5), (20, y + 5)], e.color.filled())).map_err(err)?;
        } else {
            let style = e.color.stroke_width(2);
            let pts = vec![(2, y), (22, y)];
            match e.dash {
                0 => area.draw(&PathElement::new(pts, style)),
                1 => area.draw(&DashedPathElement::new(pts, 7, 4, style)),
                _ => area.draw(&DashedPathElement::new(pts, 2, 3, style)),
            }
            .map_err(err)?;
        }
        let text: String = if e.text.chars().count() > LEGEND_CHARS {
            e.text.chars().take(LEGEND_CHARS - 1).chain(['…']).collect()
        } else {
            e.text.clone()
        };
        area.draw_text(&text, &font.color(&BLACK), (26, y - 7)).map_err(err)?;
    }
    if entries.len() > rows {
        let y = 40 + 18 * rows as i32;
        area.draw_text(&format!("+{} more", entries.len() - rows), &font.color(&BLACK), (26, y - 7)).map_err(err)?;
    }
    Ok(())
}
