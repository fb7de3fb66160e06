//! The method around single tests: every run kept in the results store ([`Recorder`]),
//! repeated iterations with confidence intervals ([`iterate`]), sweeps over test options
//! ([`sweep`]) and the environment recorded beside each run ([`env`]).

pub mod env;
pub mod iterate;
pub mod sweep;

use crate::cli::common::StoreArgs;
use crate::Failure;
use fathom_report::series::Series;
use fathom_report::Report;
use fathom_store::{NewRun, SeriesSlot, Store};
use std::cell::RefCell;
use std::path::PathBuf;

/// Keeps runs and series in the store. A store that cannot be opened or written never costs a
/// result: the run is still printed, with a warning saying why it was not kept.
pub struct Recorder {
    store: RefCell<Option<Store>>,
    env: serde_json::Value,
    command: Vec<String>,
}

impl Recorder {
    /// Opens the store the options name (none with `--no-store`), warning if it cannot. Every
    /// run and series it keeps records `command`, the command line as the user typed it
    /// (without the program name).
    pub fn open(a: &StoreArgs, command: &[String]) -> Recorder {
        let store = if a.no_store {
            None
        } else {
            Store::open(a.resolved())
                .map_err(|e| eprintln!("fathom: warning: results will not be stored: {e}"))
                .ok()
        };
        Recorder::with(store, command)
    }

    /// Opens the store, failing if it cannot (sweeps need it to resume); none with --no-store.
    /// `command` is as for [`Recorder::open`].
    pub fn open_required(a: &StoreArgs, command: &[String]) -> Result<Recorder, Failure> {
        let store = if a.no_store {
            None
        } else {
            Some(Store::open(a.resolved()).map_err(|e| Failure::Runtime(e.to_string()))?)
        };
        Ok(Recorder::with(store, command))
    }

    fn with(store: Option<Store>, command: &[String]) -> Recorder {
        Recorder {
            store: RefCell::new(store),
            env: env::collect(),
            command: command.to_vec(),
        }
    }

    /// The command line as the user typed it, without the program name.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// The database file, when there is one.
    pub fn path(&self) -> Option<PathBuf> {
        self.store.borrow().as_ref().map(|s| s.path().to_path_buf())
    }

    /// Saves one run with `args`, its own arguments (what would run it alone), and the command
    /// line as typed; its id, or `None` (with a warning) if it could not be saved.
    pub fn save(
        &self,
        report: &Report,
        args: &[String],
        series: Option<SeriesSlot>,
    ) -> Option<i64> {
        let mut guard = self.store.borrow_mut();
        let store = guard.as_mut()?;
        let run = NewRun {
            report,
            args,
            command: &self.command,
            env: &self.env,
            series,
        };
        match store.save_run(&run) {
            Ok(id) => {
                if series.is_none() {
                    eprintln!("fathom: stored as run {id} in {}", store.path().display());
                }
                Some(id)
            }
            Err(e) => {
                eprintln!("fathom: warning: the run was not stored: {e}");
                None
            }
        }
    }

    /// Starts a series; its id (`None` without a store).
    pub fn create_series(&self, s: &Series, fingerprint: &str) -> Result<Option<i64>, Failure> {
        let mut guard = self.store.borrow_mut();
        guard
            .as_mut()
            .map(|st| st.create_series(s, fingerprint))
            .transpose()
            .map_err(|e| Failure::Runtime(e.to_string()))
    }

    /// Saves a series' latest state, warning if it cannot.
    pub fn update_series(&self, id: Option<i64>, s: &Series) {
        let mut guard = self.store.borrow_mut();
        if let (Some(st), Some(i)) = (guard.as_mut(), id) {
            if let Err(e) = st.update_series(i, s) {
                eprintln!("fathom: warning: the series was not stored: {e}");
            }
        }
    }

    /// The newest unfinished series with this fingerprint.
    pub fn find_incomplete(&self, fingerprint: &str) -> Result<Option<(i64, Series)>, Failure> {
        match self.store.borrow().as_ref() {
            Some(st) => st
                .find_incomplete_series(fingerprint)
                .map_err(|e| Failure::Runtime(e.to_string())),
            None => Ok(None),
        }
    }

    /// The finished runs of point `point` of series `series_id`, by iteration: what an
    /// interrupted point already measured, to be kept when it resumes. Runs that failed or were
    /// interrupted are left out; a store that cannot be read gives none (the point runs whole).
    pub fn finished_runs(&self, series_id: i64, point: u32) -> Vec<(i64, Report)> {
        let guard = self.store.borrow();
        let Some(st) = guard.as_ref() else {
            return Vec::new();
        };
        let loaded = st.series_runs(series_id).and_then(|runs| {
            runs.into_iter()
                .filter(|&(p, _, _)| p == point)
                .map(|(_, _, id)| st.load_run(id).map(|r| (id, r.report)))
                .collect::<Result<Vec<_>, _>>()
        });
        match loaded {
            Ok(runs) => runs
                .into_iter()
                .filter(|(_, r)| r.error.is_none())
                .collect(),
            Err(e) => {
                eprintln!("fathom: warning: the interrupted point runs again whole: {e}");
                Vec::new()
            }
        }
    }
}
