//! A cell's prediction prepared once for all the iterations it is priced at.
//!
//! Of everything a prediction is made of, only ln K (through the fresh iterations), the share of
//! a format gap closed and the downside's sd move with the iterations; a sweep prices each step at
//! every budget of its grid, so [`PreparedPrediction::of`] computes the rest once and [`PreparedPrediction::at`] finishes
//! it per budget. [`super::parts`] and [`super::predict`] are these two calls in a row, so the
//! reuse gives the same bits.

use super::*;

/// [`Parts`] without the terms that move with the iterations, and the inputs of those terms.
#[derive(Debug, Clone, Copy)]
pub struct StaticParts {
    /// The parts; `ln_k` and `downside_logit_sd` are set by [`StaticParts::at`].
    parts: Parts,
    pass_share: Option<f64>,
    data_reuse: f64,
    ln_k_epochs: f64,
    ln_k_batch: f64,
    ln_k_signal: f64,
    downside_at_reference: f64,
    /// τ_f, steps (read only when the cell has a format gap).
    format_closure_steps: f64,
}

/// The multiplier of Δ(N) from the run's ceiling terms: the coverage of its prompts, its
/// truncation, its cap above the reference (ScaleRL), its useful rollouts per step up to their
/// saturation (IsoCompute), and the reward's ceiling.
fn ceiling_multiplier(
    params: &OutcomeParams,
    s: &CellSignal,
    ceiling: f64,
    cap_ln: f64,
    rollouts_ln: f64,
) -> f64 {
    use ParamId::*;
    let v = |id: ParamId| params[id].value;
    let ceiling_cap_ln = cap_ln.min(MAX_CEILING_CAP_LN);
    // IsoCompute (arXiv 2603.12151, Question 1 obs. 2): past a point more rollouts per step no
    // longer raise what a fixed base model and problem set can reach.
    // (Compared in linear space: the logarithm is taken only for saturated cells.)
    let ceiling_rollouts_ln = if s.useful_rollouts_per_step > v(RolloutSaturation) {
        (v(RolloutSaturation) / REFERENCE_ROLLOUTS).ln()
    } else {
        rollouts_ln
    };
    pow_ln(s.coverage.clamp(0.0, 1.0).ln(), v(CoverageExponent))
        * pow_ln(
            (1.0 - s.truncation_rate).clamp(0.0, 1.0).ln(),
            v(LengthCeilingExponent),
        )
        // ScaleRL (Table 1): the 32k generation budget reaches higher than 14k, by more than
        // truncation explains. Like K_mid's length term, only above the reference cap.
        * pow_ln(ceiling_cap_ln, v(CapCeilingExponent))
        * if s.useful_rollouts_per_step > 0.0 {
            pow_ln(ceiling_rollouts_ln, v(BatchCeilingExponent))
        } else {
            0.0
        }
        * ceiling
}

/// The share of full fine-tuning's signal a LoRA of rank r keeps, r / (r + r_half(N)); 1 for
/// full fine-tuning.
fn lora_share(params: &OutcomeParams, s: &CellSignal) -> f64 {
    use ParamId::*;
    let v = |id: ParamId| params[id].value;
    match s.lora_rank {
        None => 1.0,
        Some(rank) => {
            let half = v(LoraHalfRankAt05b)
                * pow_ln(
                    (s.policy_params / LORA_REFERENCE_PARAMS).ln(),
                    v(LoraHalfRankSizeExponent),
                );
            rank as f64 / (rank as f64 + half)
        }
    }
}

/// ln K_mid: the reference time scale, scaled by the policy's size, the cap above the reference,
/// the kind of start's time factor and the task's difficulty.
fn ln_k_mid_of(
    params: &OutcomeParams,
    s: &CellSignal,
    size_ln: f64,
    cap_ln: f64,
    time_factor: f64,
) -> f64 {
    use ParamId::*;
    let v = |id: ParamId| params[id].value;
    v(KMidAt7b).ln() - v(KMidSizeExponent) * size_ln
        // Only above the reference cap: the evidence (ScaleRL's 14k and 32k) says longer caps
        // start slower; it says nothing about caps below 8k, so they are not made faster.
        + v(KMidLengthExponent)
            * cap_ln
        + time_factor.ln()
        // IsoCompute (Question 1 obs. 3): harder sets need more sequential updates. (At the
        // reference pass rate the term is exactly 0: no logarithm for the default task.)
        + if s.pass_rate_mean == REFERENCE_PASS_RATE {
            0.0
        } else {
            v(DifficultyTimeExponent)
                * (REFERENCE_PASS_RATE / s.pass_rate_mean.max(MIN_PASS_RATE)).ln()
        }
}

impl StaticParts {
    /// The parts of signal `s` that its iterations do not move (`s.iterations` is not read).
    pub fn of(params: &OutcomeParams, s: &CellSignal) -> Self {
        use ParamId::*;
        let v = |id: ParamId| params[id].value;
        let size_ln = (s.policy_params / REFERENCE_PARAMS).ln();
        let decades = size_ln / std::f64::consts::LN_10;
        // A measured base score is known, not uncertain.
        let r0 = match s.measured_base_score {
            Some(measured) => measured.clamp(0.0, 1.0),
            None => default_base_score(params, decades, |p| p.value),
        };
        // A base model's measured score below what its other math benchmarks imply is a format
        // gap (outcome::ability): the run reaches at least the implied score. Tuned checkpoints
        // were taught a format; their gaps between benchmarks are a profile, not a format
        // failure (distilled models score far higher on AIME, relative to MATH-500, than base
        // models do), so they get none.
        let ability_floor = match (s.start, s.measured_base_score, s.ability_score) {
            (StartKind::Base, Some(_), Some(implied)) => implied.clamp(0.0, 1.0),
            _ => 0.0,
        };
        let (signal, ceiling) = reward_signal_and_ceiling(params, s.reward);
        let rollouts_ln = (s.useful_rollouts_per_step / REFERENCE_ROLLOUTS)
            .max(0.0)
            .ln();
        // ln(max(cap, 8192) / 8192): the length terms of the ceiling and of K_mid act above the
        // reference cap only (0, with no logarithm taken, at or below it). The ceiling's is held at
        // the longest cap of its evidence (ScaleRL's 32k): a higher ceiling is not extrapolated.
        let cap_ln = if s.response_cap_tokens > REFERENCE_RESPONSE_CAP {
            (s.response_cap_tokens / REFERENCE_RESPONSE_CAP).ln()
        } else {
            0.0
        };
        let multiplier = ceiling_multiplier(params, s, ceiling, cap_ln, rollouts_ln);
        let gain_at_size = (v(GainLogitAt7b) + v(GainLogitPerDecade) * decades).max(0.0);
        let lora = lora_share(params, s);
        // ln K = ln(fresh iterations) + ln reuse(epochs) + κ ln(U / 1024) + ln(signal × LoRA): the
        // first term is the iterations'; the rest are kept in the order they are added.
        let ln_k_epochs = reuse(v(EpochReuse), s.update_epochs).ln();
        let ln_k_batch = v(BatchExponent) * rollouts_ln;
        let ln_k_signal = (signal * lora).ln();
        let start = StartTerms::of(params, s.start);
        let ln_k_mid = ln_k_mid_of(params, s, size_ln, cap_ln, start.time_factor);
        let (benchmark_gain, floor) = benchmark_gain_and_floor(params, s.benchmark);
        let multiplier = multiplier * start.gain_factor * benchmark_gain;
        let base_score_sd = match s.measured_base_score {
            Some(_) => 0.0,
            None => params[BaseScoreAt7b].sd() + params[BaseScorePerDecade].sd() * decades,
        };
        let parts = Parts {
            base_score: r0,
            ability_floor,
            format_gap_closed: 0.0,
            base_logit: logit(r0.max(floor)),
            base_score_sd: base_score_sd.abs(),
            base_logit_floor: floor,
            gain_logit: gain_at_size * multiplier,
            gain_multiplier: multiplier,
            ln_k: f64::NAN,
            ln_k_mid,
            steepness: v(Steepness),
            floor_logit_sd: start.floor_sd,
            downside_logit_sd: f64::NAN,
        };
        StaticParts {
            parts,
            pass_share: s.pass_share_per_step,
            data_reuse: v(DataReuse),
            ln_k_epochs,
            ln_k_batch,
            ln_k_signal,
            downside_at_reference: params[DownsideSdAt1000Steps].value,
            format_closure_steps: v(FormatClosureSteps),
        }
    }

    /// The parts at `iterations`.
    pub fn at(&self, iterations: f64) -> Parts {
        let ln_k = fresh_iterations(iterations, self.pass_share, self.data_reuse).ln()
            + self.ln_k_epochs
            + self.ln_k_batch
            + self.ln_k_signal;
        // A base model's format gap closes with the steps, whatever else the cell does (no
        // exponential taken for the cells without one: almost all of a sweep's).
        let format_gap_closed = if self.parts.ability_floor > self.parts.base_score {
            -(-iterations.max(0.0) / self.format_closure_steps).exp_m1()
        } else {
            0.0
        };
        Parts {
            ln_k,
            downside_logit_sd: downside_sd_of(self.downside_at_reference, iterations),
            format_gap_closed,
            ..self.parts
        }
    }
}

/// A reward's signal (its share of a rule reward's learning per step) and its ceiling (the
/// share of the reachable gain it can reach): 1 and 1 for a rule.
fn reward_signal_and_ceiling(params: &OutcomeParams, reward: RewardKind) -> (f64, f64) {
    use ParamId::*;
    let v = |id: ParamId| params[id].value;
    match reward {
        RewardKind::Rule => (1.0, 1.0),
        RewardKind::Prm => (v(PrmSignal), v(PrmCeiling)),
        RewardKind::Orm => (v(OrmSignal), v(OrmCeiling)),
        RewardKind::Judge => (v(JudgeSignal), v(JudgeCeiling)),
    }
}

/// A benchmark kind's factor on the gain and the logit a base score is read at no lower than.
/// Competition sets: a steeper score-ability curve, and a near-zero base read at the floor.
fn benchmark_gain_and_floor(params: &OutcomeParams, benchmark: Benchmark) -> (f64, f64) {
    use ParamId::*;
    let v = |id: ParamId| params[id].value;
    match benchmark {
        Benchmark::Standard => (1.0, LOGIT_FLOOR),
        Benchmark::General => (v(GeneralGainFactor), LOGIT_FLOOR),
        Benchmark::Competition => (
            v(CompetitionGainFactor),
            v(CompetitionBaseFloor).max(LOGIT_FLOOR),
        ),
    }
}

/// A prediction's median at some iterations, before its interval
/// ([`PreparedPrediction::median_at`]).
#[derive(Debug, Clone, Copy)]
pub struct Median {
    /// The predicted score (the median of the predictive distribution).
    pub score: f64,
    parts: Parts,
    progress: f64,
}

/// A cell's prediction before its iterations: the parts, the ceilings at the interval's shifted
/// gains and default base scores, and the spreads.
#[derive(Debug, Clone, Copy)]
pub struct PreparedPrediction {
    parts: StaticParts,
    ceiling: f64,
    /// The ceilings at Δ shifted by −Z90 and +Z90 gain sd.
    shifted_ceilings: [f64; 2],
    time_sd: f64,
    /// With the base score not measured: the default base score's two ends and their ceilings.
    default_bases: Option<[(f64, f64); 2]>,
    /// With a format gap: the implied score at its low end ([`ability::implied_score_low`]) and
    /// the ceiling with it.
    low_floor: Option<(f64, f64)>,
    /// With a format gap and τ_f's range reaching below its value: τ_f / τ_f's low end, so that
    /// the share closed at the low end is 1 − (1 − share)^this (the same exponential, faster).
    fast_closure: Option<f64>,
    seed_logit_sd: f64,
}

impl PreparedPrediction {
    /// Prepares the prediction of signal `s` (`s.iterations` is not read).
    pub fn of(params: &OutcomeParams, s: &CellSignal) -> Self {
        let parts = StaticParts::of(params, s);
        let p = &parts.parts;
        let spread = Spread::of(params);
        let gain_sd = p.gain_multiplier
            * (spread.gain_parameter.powi(2) + spread.gain_discrepancy.powi(2)).sqrt();
        let time_sd = (spread.time_parameter.powi(2) + spread.time_discrepancy.powi(2)).sqrt();
        let shifted_ceilings = [-1.0, 1.0].map(|sign| ceiling_of(p, sign * Z90 * gain_sd));
        let default_bases = s.measured_base_score.is_none().then(|| {
            let decades = (s.policy_params / REFERENCE_PARAMS).log10();
            [|q: Param| q.low, |q: Param| q.high].map(|pick| {
                let r0 = default_base_score(params, decades, pick);
                let shifted = Parts {
                    base_score: r0,
                    base_logit: logit(r0),
                    ..*p
                };
                (r0, ceiling_of(&shifted, 0.0))
            })
        });
        let low_floor = (p.ability_floor > p.base_score).then(|| {
            let low = ability::implied_score_low(p.ability_floor, p.base_score);
            let lowered = Parts {
                ability_floor: low,
                ..*p
            };
            (low, ceiling_of(&lowered, 0.0))
        });
        let closure = params[ParamId::FormatClosureSteps];
        let fast_closure = (p.ability_floor > p.base_score && closure.low < closure.value)
            .then(|| closure.value / closure.low);
        PreparedPrediction {
            ceiling: ceiling_of(p, 0.0),
            parts,
            shifted_ceilings,
            time_sd,
            default_bases,
            low_floor,
            fast_closure,
            seed_logit_sd: spread.seed_logit,
        }
    }

    /// The prediction at `iterations`.
    pub fn at(&self, iterations: f64) -> Prediction {
        self.interval(&self.median_at(iterations))
    }

    /// The predicted score at `iterations` without its interval: what a sweep's first pass needs
    /// to decide whether a cell can matter at all. [`PreparedPrediction::interval`] finishes it
    /// into [`PreparedPrediction::at`]'s prediction, bit for bit.
    pub fn median_at(&self, iterations: f64) -> Median {
        let parts = self.parts.at(iterations);
        let progress = progress_of(&parts, 0.0);
        Median {
            score: score_of(start_score(&parts), self.ceiling, progress),
            parts,
            progress,
        }
    }

    /// The whole prediction from its median (see [`PreparedPrediction::median_at`]).
    pub fn interval(&self, median: &Median) -> Prediction {
        let Median {
            parts: p,
            progress,
            score,
        } = *median;
        let ceiling = self.ceiling;
        // Where the sigmoid starts (R0 with the format gap closed so far): the shifted scores
        // move Δ and K_mid, not that.
        let r0 = start_score(&p);
        // At most six shifted scores: Δ and K_mid each way, and the default base's two ends or
        // (a format gap needs a measured base) the gap's implied score at its low end and its
        // closing at τ_f's low end.
        let mut shifted_scores = [0.0f64; 6];
        let mut n = 0;
        let mut push = |x: f64| {
            shifted_scores[n] = x;
            n += 1;
        };
        for (k, sign) in [-1.0, 1.0].into_iter().enumerate() {
            push(score_of(r0, self.shifted_ceilings[k], progress));
            push(score_of(
                r0,
                ceiling,
                progress_of(&p, sign * Z90 * self.time_sd),
            ));
        }
        if let Some(bases) = &self.default_bases {
            for &(base, base_ceiling) in bases {
                push(score_of(base, base_ceiling, progress));
            }
        }
        if let Some((low, low_ceiling)) = self.low_floor {
            let lowered = Parts {
                ability_floor: low,
                ..p
            };
            push(score_of(start_score(&lowered), low_ceiling, progress));
        }
        if let Some(ratio) = self.fast_closure {
            let faster = Parts {
                format_gap_closed: 1.0 - (1.0 - p.format_gap_closed).powf(ratio),
                ..p
            };
            push(score_of(start_score(&faster), ceiling, progress));
        }
        let (mut up, mut down) = self.logit_spreads(&p, score, progress);
        for &shifted in &shifted_scores[..n] {
            let d = shifted - score;
            if d > 0.0 {
                up += d * d;
            } else {
                down += d * d;
            }
        }
        Prediction {
            base_score: p.base_score,
            ceiling,
            signal: p.ln_k.exp(),
            k_mid: p.ln_k_mid.exp(),
            score,
            score_low: (score - down.sqrt()).clamp(0.0, 1.0),
            score_high: (score + up.sqrt()).clamp(0.0, 1.0),
        }
    }

    /// The squared 90% spreads above and below `score` of the terms that act in logit units, in
    /// this order: seed noise, which moves the run's ability ([`super::seed_logit_sd`]) scaled
    /// by how far the run has moved from its (known) start; the floor, the kind's own spread of
    /// outcomes however little progress is predicted; and the downside, ground the run may
    /// lose, on the low side only.
    fn logit_spreads(&self, p: &Parts, score: f64, progress: f64) -> (f64, f64) {
        let score_logit = logit_unclamped(score);
        let seed = Z90 * self.seed_logit_sd * progress;
        let (mut up, mut down) = if seed > 0.0 {
            (
                (logistic(score_logit + seed) - score).powi(2),
                (score - logistic(score_logit - seed)).powi(2),
            )
        } else {
            (0.0, 0.0)
        };
        if p.floor_logit_sd > 0.0 {
            let floor = Z90 * p.floor_logit_sd;
            up += (logistic(score_logit + floor) - score).powi(2);
            down += (score - logistic(score_logit - floor)).powi(2);
        }
        if p.downside_logit_sd > 0.0 {
            down += (score - logistic(score_logit - Z90 * p.downside_logit_sd)).powi(2);
        }
        (up, down)
    }
}
