//! The advisor's findings about a run, as a part of its HTML section: ranked, each with what was
//! seen, why it limits and what to change. Only a run that has advice (`--advise`, or one that
//! `fathom doctor --run` explained and stored) shows it.

use super::esc;
use crate::model::Advice;

/// The advice part of a run's section; empty when the run has no advice.
pub fn part(advice: Option<&[Advice]>) -> String {
    let Some(advice) = advice else {
        return String::new();
    };
    let mut h = String::from("<div class=\"advice\">\n<h3>Advice</h3>\n");
    if advice.is_empty() {
        h.push_str("<p>The advisor found nothing that limited this run.</p>\n</div>\n");
        return h;
    }
    h.push_str("<ol>\n");
    for a in advice {
        h.push_str(&format!(
            "<li><strong>{}</strong> <code>{}</code> ({} confidence): {}<br>why: {}<br>change: <code>{}</code></li>\n",
            esc(&a.severity),
            esc(&a.id),
            esc(&a.confidence),
            esc(&a.seen),
            esc(&a.why),
            esc(&a.change)
        ));
    }
    h.push_str("</ol>\n</div>\n");
    h
}
