//! Putting a lab's WAN links back: a sweep or study that varies `rtt` or `rate` saves every
//! link's parameters before its first point and writes them back when it ends, fails or is
//! stopped by Ctrl-C (the guard restores on drop), so later tests run over the lab as it was made.

use super::error::LinkError;
use fathom_lab::{DirectionParams, Directions, Lab};

/// The links of a lab as they were; writes them back when dropped.
pub struct LinkGuard<'a> {
    lab: &'a Lab,
    saved: Vec<(String, DirectionParams)>,
}

impl<'a> LinkGuard<'a> {
    /// Saves the parameters of every WAN link of `lab`.
    pub(super) fn save(lab: &'a Lab) -> Result<LinkGuard<'a>, LinkError> {
        let saved = fathom_lab::wan_links(lab)
            .map_err(LinkError::Save)?
            .into_iter()
            .map(|l| (l.name, l.params))
            .collect();
        Ok(LinkGuard { lab, saved })
    }

    /// Writes the saved parameters back, each direction as it was.
    fn restore(&self) -> Result<(), LinkError> {
        for (name, p) in &self.saved {
            for (params, dir) in [(&p.a_to_b, Directions::AToB), (&p.b_to_a, Directions::BToA)] {
                fathom_lab::set_wan(self.lab, name, params, dir, true).map_err(|source| {
                    LinkError::Restore {
                        name: name.clone(),
                        source,
                    }
                })?;
            }
        }
        Ok(())
    }
}

impl Drop for LinkGuard<'_> {
    fn drop(&mut self) {
        match self.restore() {
            Ok(()) if !self.saved.is_empty() => eprintln!(
                "fathom: lab {}: WAN links put back as they were before the sweep",
                self.lab.name()
            ),
            Ok(()) => {}
            Err(e) => eprintln!(
                "fathom: warning: lab {}: could not put a WAN link back ({e}); set it with \
                 `fathom lab wan set`",
                self.lab.name()
            ),
        }
    }
}
