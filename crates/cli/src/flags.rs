//! Warnings for flags that a command line gives but that would change nothing, so a user
//! is not left believing they took effect.

/// What the command line asked for, as far as the warnings need it.
pub struct Given {
    pub sample: bool,
    pub text_to_stdout: bool,
    pub json_somewhere: bool,
    pub plots: bool,
    pub html: bool,
    pub png: bool,
    pub all_figures: bool,
    pub timeline: bool,
    pub timeline_options: bool,
}

/// One message per ignored flag.
pub fn ignored(g: &Given) -> Vec<String> {
    let mut out = Vec::new();
    if g.sample && g.text_to_stdout && !g.json_somewhere && !g.plots && !g.html {
        out.push(
            "--sample: the time series go only into JSON (--format json or --out DIR), figures (--plots) and \
             the HTML report (--html); the text output ignores them"
                .into(),
        );
    }
    if g.png && !g.plots {
        out.push("--png applies to --plots (or `schedlab plot`): no PNG is written".into());
    }
    if g.all_figures && !g.plots && !g.html {
        out.push("--all-figures applies to --plots and --html: no figure is written".into());
    }
    if g.timeline_options && !g.timeline {
        out.push("--timeline-width/--timeline-from/--timeline-to apply to --timeline: no timeline is printed".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Given {
        Given {
            sample: false,
            text_to_stdout: true,
            json_somewhere: false,
            plots: false,
            html: false,
            png: false,
            all_figures: false,
            timeline: false,
            timeline_options: false,
        }
    }

    #[test]
    fn sample_with_text_output_is_warned_about_and_with_json_not() {
        assert!(ignored(&none()).is_empty());
        let g = Given { sample: true, ..none() };
        assert_eq!(ignored(&g).len(), 1);
        assert!(ignored(&g)[0].starts_with("--sample"));
        assert!(ignored(&Given { sample: true, json_somewhere: true, ..none() }).is_empty());
        assert!(ignored(&Given { sample: true, plots: true, ..none() }).is_empty());
        assert!(ignored(&Given { png: true, ..none() })[0].starts_with("--png"));
    }
}
