//! Random loss: decides, frame by frame, whether the emulated link loses it.

use crate::params::LossModel;
use crate::rng::Rng;

/// The loss model with its state (the Gilbert–Elliott chain's current state).
#[derive(Clone, Debug)]
pub struct Loss {
    model: LossModel,
    bad: bool,
}

impl Loss {
    /// A fresh model; Gilbert–Elliott starts in the good state.
    pub fn new(model: LossModel) -> Self {
        Loss { model, bad: false }
    }

    /// Changes the model; a Gilbert–Elliott chain keeps its state if the new model is one too.
    pub fn set_model(&mut self, model: LossModel) {
        if !matches!(model, LossModel::GilbertElliott { .. }) {
            self.bad = false;
        }
        self.model = model;
    }

    /// Whether the next frame is lost.
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Random(p) => rng.chance(p),
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let flip = if self.bad { r } else { p };
                if rng.chance(flip) {
                    self.bad = !self.bad;
                }
                rng.chance(if self.bad { loss_bad } else { loss_good })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 100_000;

    /// Lost frames and the mean length of runs of consecutive losses over `N` frames.
    fn run(model: LossModel, seed: u64) -> (usize, f64) {
        let (mut loss, mut rng) = (Loss::new(model), Rng::new(seed));
        let (mut lost, mut runs, mut previous) = (0, 0, false);
        for _ in 0..N {
            let now = loss.lose(&mut rng);
            lost += now as usize;
            runs += (now && !previous) as usize;
            previous = now;
        }
        (lost, lost as f64 / runs.max(1) as f64)
    }

    #[test]
    fn random_loss_within_four_sigma() {
        for seed in 1..=5 {
            let (lost, _) = run(LossModel::Random(0.01), seed);
            let sigma = (N as f64 * 0.01 * 0.99).sqrt();
            assert!(
                (lost as f64 - 1000.0).abs() < 4.0 * sigma,
                "seed {seed}: {lost} lost"
            );
        }
    }

    #[test]
    fn no_loss_and_total_loss() {
        assert_eq!(run(LossModel::None, 1).0, 0);
        assert_eq!(run(LossModel::Random(0.0), 1).0, 0);
        assert_eq!(run(LossModel::Random(1.0), 1).0, N);
    }

    #[test]
    fn gilbert_elliott_rate_and_burst_length() {
        // p = 1%, r = 25%: the bad state holds p / (p + r) = 3.85% of frames, bursts average 1/r = 4.
        let model = LossModel::GilbertElliott {
            p: 0.01,
            r: 0.25,
            loss_bad: 1.0,
            loss_good: 0.0,
        };
        let (lost, burst) = run(model, 7);
        let rate = lost as f64 / N as f64;
        assert!((0.030..0.047).contains(&rate), "loss rate {rate}");
        assert!((3.5..4.5).contains(&burst), "mean burst {burst}");
    }

    #[test]
    fn same_seed_repeats() {
        let model = LossModel::GilbertElliott {
            p: 0.02,
            r: 0.5,
            loss_bad: 0.8,
            loss_good: 0.001,
        };
        assert_eq!(run(model, 3), run(model, 3));
    }
}
