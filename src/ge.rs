//! Two-state Gilbert-Elliott loss models of one direction's transmissions (DOMAIN.md section 7):
//! the simple Gilbert estimate in closed form and the Baum-Welch (EM) fit with SQUAREM
//! acceleration. The Python side (`tcpsack_analyze/loss/patterns.py`) hands in the loss
//! sequences as one column with offsets and builds its `GilbertElliott` objects from the columns
//! that come back (`py_ge.rs`).
//!
//! A sequence is one direction's data-segment transmissions in transmission order, originals and
//! retransmissions alike, `true` for a transmission that was lost. Once per transmission the
//! chain moves good->bad with probability `p` and bad->good with probability `r`, then the
//! transmission is lost with probability `loss_good` or `loss_bad` in the state it is in; the
//! chain is in the good state before the first transmission (as the lab's emulator starts it).
//!
//! Each sequence is fitted on its own: the result depends on the sequence and the two stopping
//! parameters only, never on which other sequences are fitted in the same call, so a direction
//! can be fitted as soon as its connection is finished.

/// Fewer transmissions say nothing about a two-state chain: no estimate and no fit.
pub const MIN_FIT_SEGMENTS: usize = 10;
/// Forward-backward passes of one fit at the most.
pub const MAX_ITERATIONS: u32 = 200;
/// A fit stops when a SQUAREM cycle gains less log-likelihood than this share of it.
pub const TOLERANCE: f64 = 1e-8;
/// How far inside [0, 1] an accelerated step lands (EM can still move every parameter there).
pub const PROBABILITY_FLOOR: f64 = 1e-9;
/// The simple Gilbert estimate puts the loss probabilities on the boundary (0 and 1) and may put
/// p or r there too; Baum-Welch cannot move a parameter off 0 or 1 (a state that never loses is
/// never credited with a loss), so it starts this far inside.
pub const START_MARGIN: f64 = 0.01;
/// `run_power` uses its closed form where 1 - l2/l1 is at least this and no entry of the first
/// projection exceeds PROJECTION_LIMIT; there it agrees with squaring to about 1e-13 (the error
/// grows with the square of the projections).
const DISTINCT_EIGENVALUES: f64 = 1e-2;
const PROJECTION_LIMIT: f64 = 10.0;

/// A fitted (or estimated) model: the parameters, the natural log of the probability of the
/// sequence under them, the forward-backward passes made (0 for the closed-form estimate) and
/// whether the fit met its tolerance before its cap. The bad state is the one that loses more.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    pub p: f64,
    pub r: f64,
    pub loss_good: f64,
    pub loss_bad: f64,
    pub log_likelihood: f64,
    pub iterations: u32,
    pub converged: bool,
}

type M2 = [[f64; 2]; 2];
const EYE: M2 = [[1.0, 0.0], [0.0, 1.0]];

/// The simple Gilbert model (loss_good = 0, loss_bad = 1) read off the sequence in closed form.
///
/// With every loss in the bad state and none in the good one, the states are observed and the
/// maximum-likelihood transition probabilities are counts: p = bursts / good transmissions
/// followed by another (the chain's start counts as one), r = bursts that ended / lost
/// transmissions followed by another (1/b when no lost transmission has a successor). A burst is
/// a maximal run of lost transmissions. The log-likelihood is the same counts times the logs of
/// their probabilities (a move that never happens adds nothing, even with probability 0). None
/// with no losses or fewer than MIN_FIT_SEGMENTS transmissions.
pub fn gilbert_estimate(lost: &[bool]) -> Option<Model> {
    let n = lost.len();
    let lost_count = lost.iter().filter(|&&x| x).count();
    if n < MIN_FIT_SEGMENTS || lost_count == 0 {
        return None;
    }
    let burst_count = (0..n).filter(|&i| lost[i] && (i == 0 || !lost[i - 1])).count();
    let last_lost = usize::from(lost[n - 1]);
    let leave_good = 1 + (n - lost_count) - (1 - last_lost); // good -> anything, the start included
    let leave_bad = lost_count - last_lost; // bad -> anything
    let ended = burst_count - last_lost; // bad -> good
    let p = burst_count as f64 / leave_good as f64;
    let r = if leave_bad > 0 { ended as f64 / leave_bad as f64 } else { burst_count as f64 / lost_count as f64 };
    let moves = [leave_good - burst_count, burst_count, ended, leave_bad - ended];
    let probabilities = [1.0 - p, p, r, 1.0 - r];
    let log_likelihood = moves.iter().zip(probabilities).filter(|(&m, _)| m > 0).map(|(&m, q)| m as f64 * q.ln()).sum();
    Some(Model { p, r, loss_good: 0.0, loss_bad: 1.0, log_likelihood, iterations: 0, converged: true })
}

/// Fit a two-state Gilbert-Elliott model to one sequence by Baum-Welch (EM).
///
/// A hidden Markov model with two states and Bernoulli (lost or not) emissions, started from the
/// simple Gilbert estimate moved START_MARGIN inside the parameter space. Each Baum-Welch step
/// runs one scaled forward-backward pass (`Runs::expected_counts`) and re-estimates p, r and the
/// two loss probabilities from the expected transition and emission counts (`maximise`). Plain
/// EM crawls when the best fit lies near the edge of the parameter space (a good state that
/// almost never loses, the common case), so the steps are accelerated by SQUAREM
/// (`squarem_jump`), which keeps EM's guarantee that the likelihood never falls. The fit stops
/// when a cycle gains less than `tolerance` times the log-likelihood (`converged`), or after
/// `max_iterations` forward-backward passes (1 evaluates the start, 2 takes one plain EM step);
/// the result is the best point evaluated. The state that loses more is reported as the bad
/// one: EM keeps the roles of its start, and should a jump ever exchange them, they are swapped
/// back. None for a sequence with no losses or fewer than MIN_FIT_SEGMENTS transmissions.
///
/// A pass takes time in proportion to the runs of equal outcomes (about twice the bursts), not
/// to the transmissions.
pub fn fit(lost: &[bool], max_iterations: u32, tolerance: f64) -> Option<Model> {
    let start = gilbert_estimate(lost)?;
    let runs = Runs::of(lost);
    let mut scratch = Scratch::default();
    let mut theta = [start.p, start.r, 0.0, 1.0].map(|x| x.clamp(START_MARGIN, 1.0 - START_MARGIN));
    let mut following = theta;
    let mut fallback = theta;
    let (mut previous, mut floor) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut second = false; // the next pass evaluates `following`, not `theta`
    let (mut passes, mut converged) = (0u32, false);
    let (mut best, mut best_likelihood) = (theta, f64::NEG_INFINITY);
    while passes < max_iterations.max(1) {
        let at = if second { following } else { theta };
        let (counts, likelihood) = runs.expected_counts(&at, &mut scratch);
        passes += 1;
        if likelihood > best_likelihood {
            (best, best_likelihood) = (at, likelihood);
        }
        let stepped = maximise(&counts, &at);
        if !second {
            // first pass of a cycle (at theta): back to the plain EM point after a downhill
            // jump, else stop when converged, else evaluate the EM step next
            if likelihood.is_nan() || likelihood < floor {
                (theta, floor) = (fallback, f64::NEG_INFINITY);
                continue;
            }
            if likelihood - previous <= tolerance * likelihood.abs() {
                converged = true;
                break;
            }
            (previous, following, second) = (likelihood, stepped, true);
        } else {
            // second pass (at following): the SQUAREM jump from theta, falling back to this EM step
            (floor, fallback, second) = (likelihood, stepped, false);
            theta = squarem_jump(&theta, &following, &stepped);
        }
    }
    let [mut p, mut r, mut loss_good, mut loss_bad] = best;
    if loss_good > loss_bad {
        (p, r, loss_good, loss_bad) = (r, p, loss_bad, loss_good);
    }
    Some(Model { p, r, loss_good, loss_bad, log_likelihood: best_likelihood, iterations: passes, converged })
}

/// The M step: (p, r, loss_good, loss_bad) from the expected counts of `Runs::expected_counts`.
/// A parameter whose state carries no weight keeps its value.
fn maximise(counts: &[M2; 2], theta: &[f64; 4]) -> [f64; 4] {
    let moves = add(&counts[0], &counts[1]); // expected transitions i -> j
    let in_state = [moves[0][0] + moves[1][0], moves[0][1] + moves[1][1]]; // expected transmissions sent in each state
    let lost_in_state = [counts[1][0][0] + counts[1][1][0], counts[1][0][1] + counts[1][1][1]];
    let numerator = [moves[0][1], moves[1][0], lost_in_state[0], lost_in_state[1]];
    let denominator = [moves[0][0] + moves[0][1], moves[1][0] + moves[1][1], in_state[0], in_state[1]];
    std::array::from_fn(|k| if denominator[k] > 0.0 { numerator[k] / denominator[k] } else { theta[k] })
}

/// SQUAREM's extrapolation from two EM steps theta -> following -> after (scheme S3).
///
/// Varadhan and Roland, "Simple and globally convergent methods for accelerating the convergence
/// of any EM algorithm", Scand. J. Statistics 35 (2008): with r the first step and v the change
/// between the steps, jump to theta + 2a r + a^2 v, a = |r| / |v| and at least 1 (a = 1 gives
/// `after`). The jump is kept PROBABILITY_FLOOR inside [0, 1]; the caller falls back to `after`
/// when it lowers the likelihood.
fn squarem_jump(theta: &[f64; 4], following: &[f64; 4], after: &[f64; 4]) -> [f64; 4] {
    let step: [f64; 4] = std::array::from_fn(|k| following[k] - theta[k]);
    let change: [f64; 4] = std::array::from_fn(|k| after[k] - 2.0 * following[k] + theta[k]);
    let size = norm(&change);
    if size == 0.0 {
        return *after;
    }
    let a = (norm(&step) / size).max(1.0);
    std::array::from_fn(|k| (theta[k] + 2.0 * a * step[k] + a * a * change[k]).clamp(PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR))
}

fn norm(v: &[f64; 4]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// A sequence as runs of equal outcomes, each run named by its kind (outcome, length): the E step
/// works per run and per kind of run, not per transmission.
struct Runs {
    run_kind: Vec<u32>,
    kinds: Vec<(usize, u64)>, // (outcome: 1 lost, 0 arrived; length), ordered by length then outcome
}

/// Buffers of one pass, kept between the passes of a fit: per kind of run N^k, its log scale and
/// W (see `RunPower`), per run the forward row before it and the backward column after it, per
/// kind the summed outer products.
#[derive(Default)]
struct Scratch {
    power: Vec<M2>,
    log_scale: Vec<f64>,
    within: Vec<Within>,
    before: Vec<[f64; 2]>,
    later: Vec<[f64; 2]>,
    ends: Vec<M2>,
}

/// Keep a vector of the forward or backward pass representable: when its sum leaves
/// [1e-100, 1e100], divide it by the sum and add the sum's log to `log`. The passes need the
/// vectors only up to a factor, and rescaling this seldom keeps the division and the logarithm
/// off the chain of products from one run to the next.
#[inline]
fn rescale(v: &mut [f64; 2], log: &mut f64) {
    let total = v[0] + v[1];
    if !(1e-100..=1e100).contains(&total) {
        divide(v, log, total);
    }
}

/// The rare branch of `rescale`, kept out of line so that the division stays off the chain (the
/// compiler would otherwise compute it every time and select).
#[cold]
#[inline(never)]
fn divide(v: &mut [f64; 2], log: &mut f64, total: f64) {
    let inverse = 1.0 / total;
    *v = [v[0] * inverse, v[1] * inverse];
    *log += total.ln();
}

impl Runs {
    fn of(lost: &[bool]) -> Runs {
        let mut raw: Vec<(usize, u64)> = Vec::new();
        let mut i = 0;
        while i < lost.len() {
            let j = i + lost[i..].iter().position(|&x| x != lost[i]).unwrap_or(lost.len() - i);
            raw.push((usize::from(lost[i]), (j - i) as u64));
            i = j;
        }
        let mut kinds: Vec<(usize, u64)> = raw.clone();
        kinds.sort_unstable_by_key(|&(outcome, length)| (length, outcome));
        kinds.dedup();
        let run_kind = raw.iter().map(|&(o, l)| kinds.binary_search_by_key(&(l, o), |&(o, l)| (l, o)).unwrap_or(0) as u32).collect();
        Runs { run_kind, kinds }
    }

    /// One scaled forward-backward pass: the expected counts and the log-likelihood of `theta`.
    ///
    /// `counts[o][i][j]` is the expected number of transmissions with outcome o (1 lost) sent in
    /// state j with the chain in state i before them (0 good, 1 bad), given the whole sequence:
    /// the E step of Baum-Welch. The log-likelihood is that of the sequence, the chain starting
    /// in the good state.
    ///
    /// Transmission t moves the state distribution by N = `steps[o_t]` (N[i][j] = A[i][j]
    /// P(o_t | j)), so a run of k equal outcomes moves it by N^k: the forward and backward passes
    /// step over runs rather than transmissions. Within a run, with a the forward row before it
    /// and b the backward column after it, the expected transitions i -> j sum to
    /// sum_m (a N^m)_i N_ij (N^(k-1-m) b)_j / (a N^k b), which is linear in the outer product of
    /// a and b: those are summed per kind of run first, then multiplied by the kind's
    /// sum_m N^m (x) N^(k-1-m) (`RunPower::spread`). Rows are scaled to sum 1 as they go.
    fn expected_counts(&self, theta: &[f64; 4], scratch: &mut Scratch) -> ([M2; 2], f64) {
        let [p, r, loss_good, loss_bad] = *theta;
        let transitions = [[1.0 - p, p], [r, 1.0 - r]];
        let arrive = [1.0 - loss_good, 1.0 - loss_bad];
        let steps: [M2; 2] = [
            std::array::from_fn(|i| std::array::from_fn(|j| transitions[i][j] * arrive[j])),
            std::array::from_fn(|i| std::array::from_fn(|j| transitions[i][j] * (1.0 - arrive[j]))),
        ];
        let Scratch { power, log_scale, within, before, later, ends } = scratch;
        let eigen = [Eigen::of(&steps[0]), Eigen::of(&steps[1])];
        power.clear();
        log_scale.clear();
        within.clear();
        // rho^(k-1) of the kinds of each outcome, in order of length, each from the one before
        let mut last = [(1u64, 1.0f64); 2];
        for &(outcome, length) in &self.kinds {
            let run = match &eigen[outcome] {
                Some(e) => {
                    let (before, rho_power) = last[outcome];
                    last[outcome] = (length, rho_power * e.rho_to(length - before));
                    RunPower::closed(e, length, last[outcome].1)
                }
                None => RunPower::by_squaring(&steps[outcome], length),
            };
            power.push(run.power);
            log_scale.push(run.log_scale);
            within.push(run.within);
        }
        // The forward row before each run (from the good state) and the backward column after it
        // (from the uniform end; its scale does not matter), both passes in one loop: they are
        // two independent chains of products, which the processor overlaps.
        let runs = self.run_kind.len();
        before.clear();
        later.clear();
        before.resize(runs, [0.0; 2]);
        later.resize(runs, [0.0; 2]);
        let (mut a, mut log_likelihood) = ([1.0, 0.0], 0.0);
        let (mut b, mut ignored) = ([1.0, 1.0], 0.0);
        for (r, (&kind, slot)) in self.run_kind.iter().zip(before.iter_mut()).enumerate() {
            *slot = a;
            let kind = kind as usize;
            let n = &power[kind];
            a = [a[0] * n[0][0] + a[1] * n[1][0], a[0] * n[0][1] + a[1] * n[1][1]];
            log_likelihood += log_scale[kind];
            rescale(&mut a, &mut log_likelihood);
            let s = runs - 1 - r;
            later[s] = b;
            let n = &power[self.run_kind[s] as usize];
            b = [n[0][0] * b[0] + n[0][1] * b[1], n[1][0] * b[0] + n[1][1] * b[1]];
            rescale(&mut b, &mut ignored);
        }
        // the row's sum at the end is P(sequence) / l1^(sum of k), up to the scales taken out
        log_likelihood += (a[0] + a[1]).ln();
        // the outer products a (x) b / (a N^k b), summed per kind
        ends.clear();
        ends.resize(self.kinds.len(), [[0.0; 2]; 2]);
        for ((&kind, a), b) in self.run_kind.iter().zip(before.iter()).zip(later.iter()) {
            let n = &power[kind as usize];
            let through = (a[0] * n[0][0] + a[1] * n[1][0]) * b[0] + (a[0] * n[0][1] + a[1] * n[1][1]) * b[1];
            let inverse = 1.0 / through;
            let e = &mut ends[kind as usize];
            for (i, ai) in a.iter().enumerate() {
                for (j, bj) in b.iter().enumerate() {
                    e[i][j] += ai * bj * inverse;
                }
            }
        }
        // sum_pq ends[p][q] W[p][q][i][j] over the kinds of each outcome, times N[i][j]: the
        // closed-form kinds summed by weight first (E1 and E2 are the outcome's, see `Eigen::spread`)
        let mut weighted = [[[[0.0; 2]; 2]; 3]; 2];
        let mut spread = [[[0.0; 2]; 2]; 2];
        for ((&(outcome, _), w), e) in self.kinds.iter().zip(within.iter()).zip(ends.iter()) {
            match w {
                Within::Closed(weights) => {
                    for (sum, weight) in weighted[outcome].iter_mut().zip(weights) {
                        *sum = add(sum, &scale(e, *weight));
                    }
                }
                Within::Full(full) => spread[outcome] = add(&spread[outcome], &spread_full(full, e)),
            }
        }
        let counts = std::array::from_fn(|outcome| {
            let total = match &eigen[outcome] {
                Some(e) => add(&spread[outcome], &e.spread(&weighted[outcome])),
                None => spread[outcome],
            };
            std::array::from_fn(|i| std::array::from_fn(|j| total[i][j] * steps[outcome][i][j]))
        });
        (counts, log_likelihood)
    }
}

/// N^k of one kind of run and W = sum_m N^m (x) N^(k-1-m), both divided by a scale whose log is
/// kept apart (a power of N shrinks geometrically with k).
struct RunPower {
    power: M2,
    log_scale: f64,
    within: Within,
}

/// W as `RunPower::of` finds it: three weights of the two eigen-projections E1, E2 of N (see
/// `Eigen`), W = w0 E1 (x) E1 + w1 E2 (x) E2 + w2 (E1 (x) E2 + E2 (x) E1); or, where the closed
/// form is not used, whole: `Full[p][q][a][b]` = sum_m N^m[p][a] N^(k-1-m)[b][q].
enum Within {
    Closed([f64; 3]),
    Full(Box<[[M2; 2]; 2]>),
}

/// sum_pq ends[p][q] W[p][q][a][b] for a W kept whole.
fn spread_full(full: &[[M2; 2]; 2], ends: &M2) -> M2 {
    std::array::from_fn(|a| std::array::from_fn(|b| (0..2).flat_map(|p| (0..2).map(move |q| (p, q))).map(|(p, q)| ends[p][q] * full[p][q][a][b]).sum()))
}

/// The eigen-decomposition of one N (a non-negative 2 by 2 matrix, so its eigenvalues are
/// real, l1 >= |l2|): l1 (`top`), 1 - rho = 1 - l2 / l1 (`gap`), ln l1, and the projections on
/// the two eigenvectors, E1 = (N - l2 I) / (l1 - l2) (`first`) and E2 = (l1 I - N) / (l1 - l2)
/// (`second`). N is the same for every run of one outcome, so a pass finds two.
#[derive(Clone, Copy)]
struct Eigen {
    top: f64,
    gap: f64,
    rho: f64,
    log_rho: f64, // ln |rho|
    log_top: f64,
    first: M2,
    second: M2,
}

impl Eigen {
    /// None where the closed form would lose precision: the projections grow, and the sum in W
    /// cancels, as l1 - l2 -> 0 or the eigenvectors come close (1 - rho below
    /// DISTINCT_EIGENVALUES or a projection entry above PROJECTION_LIMIT, or a zero matrix).
    /// Those matrices, rare and only met on the way through the parameter space, are raised to
    /// their powers by squaring instead.
    fn of(n: &M2) -> Option<Eigen> {
        let [[a, b], [c, d]] = *n;
        let spread = ((a - d) * (a - d) + 4.0 * b * c).sqrt(); // l1 - l2, a sum of non-negative terms: no cancellation
        let top = (a + d + spread) / 2.0; // l1
        let gap = if top > 0.0 { spread / top } else { 0.0 }; // 1 - rho
        if gap < DISTINCT_EIGENVALUES {
            return None;
        }
        let rho = 1.0 - gap;
        let first: M2 = std::array::from_fn(|i| std::array::from_fn(|j| (n[i][j] / top - rho * EYE[i][j]) / gap));
        if first.iter().flatten().any(|x| x.abs() > PROJECTION_LIMIT) {
            return None;
        }
        let second = std::array::from_fn(|i| std::array::from_fn(|j| EYE[i][j] - first[i][j]));
        Some(Eigen { top, gap, rho, log_rho: rho.abs().ln(), log_top: top.ln(), first, second })
    }

    /// rho^d: by multiplication for short steps, else by `powf` unless it underflows to 0 (below
    /// e^-746, where `powf` takes its slow path to say so).
    fn rho_to(&self, d: u64) -> f64 {
        match d {
            0 => 1.0,
            1..=64 => self.rho.powi(d as i32),
            _ if d as f64 * self.log_rho < -746.0 => 0.0,
            _ => self.rho.powf(d as f64),
        }
    }

    /// sum_pq ends[p][q] W[p][q][a][b] summed over kinds of this N, from the weighted sums of
    /// their ends, `weighted[t]` = sum of w_t ends: for one product term X (x) Y of W it is
    /// X^T ends Y^T, so the sum is F A0 F + F A2 S + S A2 F + S A1 S with F = E1^T, S = E2^T.
    fn spread(&self, weighted: &[M2; 3]) -> M2 {
        let (f, s) = (transpose(&self.first), transpose(&self.second));
        let [a0, a1, a2] = weighted;
        let left = add(&mul(&mul(&f, a0), &f), &mul(&mul(&f, a2), &s));
        let right = add(&mul(&mul(&s, a2), &f), &mul(&mul(&s, a1), &s));
        add(&left, &right)
    }
}

impl RunPower {
    /// N^k (and W) of a run of `length` equal outcomes in closed form from `eigen`, the
    /// decomposition of N (where it has none, `RunPower::by_squaring`).
    ///
    /// With the projections E1, E2 of N on its two eigenvectors (see `Eigen`),
    /// N^m = l1^m E1 + l2^m E2, so N^k = l1^k (E1 + rho^k E2) and
    /// W = l1^(k-1) (k E1 (x) E1 + k rho^(k-1) E2 (x) E2 + g (E1 (x) E2 + E2 (x) E1)), with
    /// rho = l2 / l1 and g = sum_m rho^m = (1 - rho^k) / (1 - rho). Both are divided by l1^k.
    /// `rho_k1` is rho^(k-1).
    fn closed(eigen: &Eigen, length: u64, rho_k1: f64) -> RunPower {
        let Eigen { top, gap, rho, log_top, first, second, .. } = *eigen;
        let k = length as f64;
        let rho_k = rho_k1 * rho;
        let power = std::array::from_fn(|i| std::array::from_fn(|j| first[i][j] + rho_k * second[i][j]));
        let g = (1.0 - rho_k) / gap;
        let inv = 1.0 / top;
        let weights = [k * inv, k * rho_k1 * inv, g * inv];
        RunPower { power, log_scale: k * log_top, within: Within::Closed(weights) }
    }

    /// `RunPower::of` for any N, by binary exponentiation of a block matrix.
    ///
    /// Both come from one power of Z = [[I (x) N, I], [0, N^T (x) I]] (8 by 8): Z^k has
    /// I (x) N^k top left (so N^k in its first 2 by 2) and sum_m (N^T)^(k-1-m) (x) N^m top right.
    /// Each product is scaled to a largest entry of 1, with the log of the scale kept apart.
    fn by_squaring(n: &M2, length: u64) -> RunPower {
        type M8 = [[f64; 8]; 8];
        let mut square: M8 = [[0.0; 8]; 8];
        for i in 0..2 {
            for j in 0..2 {
                square[i][j] = n[i][j]; // I (x) N
                square[2 + i][2 + j] = n[i][j];
                square[4 + 2 * i][4 + 2 * j] = n[j][i]; // N^T (x) I
                square[5 + 2 * i][5 + 2 * j] = n[j][i];
            }
        }
        for i in 0..4 {
            square[i][4 + i] = 1.0;
        }
        let product = |x: &M8, y: &M8| -> (M8, f64) {
            let mut out: M8 = [[0.0; 8]; 8];
            for i in 0..8 {
                for k in 0..8 {
                    for j in 0..8 {
                        out[i][j] += x[i][k] * y[k][j];
                    }
                }
            }
            let peak = out.iter().flatten().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
            for v in out.iter_mut().flatten() {
                *v /= peak;
            }
            (out, peak.ln())
        };
        let mut result: M8 = std::array::from_fn(|i| std::array::from_fn(|j| if i == j { 1.0 } else { 0.0 }));
        let (mut log_scale, mut square_log) = (0.0, 0.0);
        let mut bits = length;
        while bits > 0 {
            if bits & 1 == 1 {
                let (out, log_peak) = product(&result, &square);
                result = out;
                log_scale += square_log + log_peak;
            }
            bits >>= 1;
            if bits > 0 {
                let (out, log_peak) = product(&square, &square);
                square = out;
                square_log = 2.0 * square_log + log_peak;
            }
        }
        let power = [[result[0][0], result[0][1]], [result[1][0], result[1][1]]];
        let full =
            Box::new(std::array::from_fn(|p| std::array::from_fn(|q| std::array::from_fn(|a| std::array::from_fn(|b| result[2 * q + p][4 + 2 * b + a])))));
        RunPower { power, log_scale, within: Within::Full(full) }
    }
}

fn mul(x: &M2, y: &M2) -> M2 {
    std::array::from_fn(|i| std::array::from_fn(|j| x[i][0] * y[0][j] + x[i][1] * y[1][j]))
}

fn add(x: &M2, y: &M2) -> M2 {
    std::array::from_fn(|i| std::array::from_fn(|j| x[i][j] + y[i][j]))
}

fn scale(x: &M2, w: f64) -> M2 {
    x.map(|row| row.map(|v| v * w))
}

fn transpose(x: &M2) -> M2 {
    [[x[0][0], x[1][0]], [x[0][1], x[1][1]]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), so the tests need no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A Gilbert-Elliott sequence drawn step by step.
    fn chain(n: usize, p: f64, r: f64, loss_good: f64, loss_bad: f64, seed: u64) -> Vec<bool> {
        let mut rng = Rng(seed);
        let mut bad = false;
        (0..n)
            .map(|_| {
                bad = if bad { rng.next() >= r } else { rng.next() < p };
                rng.next() < if bad { loss_bad } else { loss_good }
            })
            .collect()
    }

    /// One Baum-Welch step over single transmissions (no runs, no closed forms): the updated
    /// parameters and the log-likelihood of `theta`.
    fn reference_step(lost: &[bool], theta: &[f64; 4]) -> ([f64; 4], f64) {
        let [p, r, loss_good, loss_bad] = *theta;
        let a = [[1.0 - p, p], [r, 1.0 - r]];
        let emit = |gone: bool, j: usize| {
            let q = [loss_good, loss_bad][j];
            if gone {
                q
            } else {
                1.0 - q
            }
        };
        let mut alpha = vec![[1.0, 0.0]];
        let mut log_likelihood = 0.0;
        for &gone in lost {
            let prev = *alpha.last().unwrap();
            let row: [f64; 2] = std::array::from_fn(|j| (prev[0] * a[0][j] + prev[1] * a[1][j]) * emit(gone, j));
            let total = row[0] + row[1];
            log_likelihood += total.ln();
            alpha.push([row[0] / total, row[1] / total]);
        }
        let mut beta = vec![[1.0, 1.0]; lost.len()];
        for t in (0..lost.len() - 1).rev() {
            let next = beta[t + 1];
            let col: [f64; 2] = std::array::from_fn(|i| (0..2).map(|j| a[i][j] * emit(lost[t + 1], j) * next[j]).sum());
            beta[t] = [col[0] / (col[0] + col[1]), col[1] / (col[0] + col[1])];
        }
        let mut moves = [[0.0; 2]; 2];
        let mut lost_in = [0.0; 2];
        for (t, &gone) in lost.iter().enumerate() {
            let xi: M2 = std::array::from_fn(|i| std::array::from_fn(|j| alpha[t][i] * a[i][j] * emit(gone, j) * beta[t][j]));
            let total: f64 = xi.iter().flatten().sum();
            for i in 0..2 {
                for j in 0..2 {
                    moves[i][j] += xi[i][j] / total;
                    if gone {
                        lost_in[j] += xi[i][j] / total;
                    }
                }
            }
        }
        let in_state = [moves[0][0] + moves[1][0], moves[0][1] + moves[1][1]];
        let updated =
            [moves[0][1] / (moves[0][0] + moves[0][1]), moves[1][0] / (moves[1][0] + moves[1][1]), lost_in[0] / in_state[0], lost_in[1] / in_state[1]];
        (updated, log_likelihood)
    }

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * x.abs().max(y.abs()) + 1e-12
    }

    #[test]
    fn estimate_by_hand() {
        // runs 0 11 0 1 00 111: 3 bursts; leave_good = 1 + 4 - 0 = 5 (last lost), leave_bad = 5,
        // ended = 2: p = 3/5, r = 2/5
        let hand = [false, true, true, false, true, false, false, true, true, true];
        let g = gilbert_estimate(&hand).unwrap();
        assert!(close(g.p, 0.6, 1e-15) && close(g.r, 0.4, 1e-15));
        let expected = 2.0 * 0.4f64.ln() + 3.0 * 0.6f64.ln() + 2.0 * 0.4f64.ln() + 3.0 * 0.6f64.ln();
        assert!(close(g.log_likelihood, expected, 1e-12));
        assert_eq!(gilbert_estimate(&hand[..9]), None);
        assert_eq!(gilbert_estimate(&[false; 20]), None);
    }

    #[test]
    fn first_steps_match_the_per_transmission_reference() {
        for seed in 1..40u64 {
            let lost = chain(20 + (seed as usize * 7) % 80, 0.1, 0.4, 0.05, 0.8, seed);
            let Some(g) = gilbert_estimate(&lost) else { continue };
            let start = [g.p, g.r, 0.0, 1.0].map(|x| x.clamp(START_MARGIN, 1.0 - START_MARGIN));
            let (mut stepped, start_likelihood) = reference_step(&lost, &start);
            let (_, stepped_likelihood) = reference_step(&lost, &stepped);
            if stepped[2] > stepped[3] {
                stepped = [stepped[1], stepped[0], stepped[3], stepped[2]];
            }
            let at_start = fit(&lost, 1, TOLERANCE).unwrap();
            let one_step = fit(&lost, 2, TOLERANCE).unwrap();
            assert!(close(at_start.log_likelihood, start_likelihood, 1e-9), "{seed}");
            assert!(close(one_step.log_likelihood, stepped_likelihood, 1e-9), "{seed}");
            let got = [one_step.p, one_step.r, one_step.loss_good, one_step.loss_bad];
            assert!(got.iter().zip(stepped).all(|(x, y)| close(*x, y, 1e-7)), "{seed}: {got:?} {stepped:?}");
            assert_eq!((one_step.iterations, one_step.converged), (2, false));
        }
    }

    #[test]
    fn recovers_a_chain() {
        let lost = chain(300_000, 0.01, 0.3, 0.01, 0.8, 2);
        let m = fit(&lost, MAX_ITERATIONS, TOLERANCE).unwrap();
        assert!(m.converged);
        assert!(close(m.p, 0.01, 0.15) && close(m.r, 0.3, 0.15), "{m:?}");
        assert!(close(m.loss_good, 0.01, 0.2) && close(m.loss_bad, 0.8, 0.07), "{m:?}");
        let (stepped, likelihood) = reference_step(&lost, &[m.p, m.r, m.loss_good, m.loss_bad]);
        assert!(close(m.log_likelihood, likelihood, 1e-9));
        assert!(stepped.iter().zip([m.p, m.r, m.loss_good, m.loss_bad]).all(|(x, y)| (x - y).abs() < 2e-3));
    }

    /// The closed form (eigen-projections) against binary exponentiation of the block matrix, on
    /// non-negative 2 by 2 matrices, some with (almost) equal eigenvalues: diag(x, x + nudge).
    #[test]
    fn closed_form_matches_squaring() {
        let mut rng = Rng(7);
        for case in 0..4000 {
            let mut entry = || if rng.next() < 0.1 { 0.0 } else { rng.next().max(1e-9) };
            let (a, b, c, d) = (entry(), entry(), entry(), entry());
            let nudge = [0.0, 1e-12, 1e-6, 1e-3, 0.1][case % 5];
            let length = 1 + (rng.next() * 5000.0) as u64;
            for n in [[[a, b], [c, d]], [[a, 0.0], [c * 1e-9, a + nudge]]] {
                if n[0][0] + n[1][1] == 0.0 {
                    continue; // EM's N always has a positive diagonal entry: N^k never vanishes
                }
                let squared = RunPower::by_squaring(&n, length);
                let eigen = Eigen::of(&n);
                let closed = match &eigen {
                    Some(e) => RunPower::closed(e, length, e.rho.powf(length as f64 - 1.0)),
                    None => RunPower::by_squaring(&n, length),
                };
                let factor = (closed.log_scale - squared.log_scale).exp();
                let ends: M2 = [[rng.next(), rng.next()], [rng.next(), rng.next()]];
                let spread = |run: &RunPower| match (&run.within, &eigen) {
                    (Within::Closed(weights), Some(e)) => e.spread(&weights.map(|w| scale(&ends, w))),
                    (Within::Full(full), _) => spread_full(full, &ends),
                    (Within::Closed(_), None) => unreachable!(),
                };
                let (w, w_sq) = (spread(&closed), spread(&squared));
                for i in 0..2 {
                    for j in 0..2 {
                        let (x, y) = (closed.power[i][j] * factor, squared.power[i][j]);
                        assert!((x - y).abs() <= 1e-12 + 1e-9 * y.abs(), "{n:?}^{length}: {x} {y}");
                        let (x, y) = (w[i][j] * factor, w_sq[i][j]);
                        assert!((x - y).abs() <= 1e-12 + 1e-9 * y.abs(), "{n:?}^{length} W: {x} {y}");
                    }
                }
            }
        }
    }

    #[test]
    fn valid_models_with_the_bad_state_losing_more() {
        let mut rng = Rng(11);
        for seed in 0..300u64 {
            let n = 10 + (rng.next() * 290.0) as usize;
            let share = rng.next();
            let lost: Vec<bool> = (0..n).map(|_| rng.next() < share).collect();
            let Some(m) = fit(&lost, MAX_ITERATIONS, TOLERANCE) else { continue };
            assert!([m.p, m.r, m.loss_good, m.loss_bad].iter().all(|x| (0.0..=1.0).contains(x)), "{seed} {m:?}");
            assert!(m.loss_good <= m.loss_bad);
            assert!((1..=MAX_ITERATIONS).contains(&m.iterations) && m.log_likelihood.is_finite() && m.log_likelihood <= 1e-9);
        }
    }
}
