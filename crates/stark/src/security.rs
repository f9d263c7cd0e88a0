//! The security a parameter set buys, round by round, in the regimes the field states it:
//! provable in the unique-decoding regime (UDR) and up to the Johnson bound (JBR), and
//! conjectured (ethSTARK).
//!
//! The provable rounds are soundcalc's (github.com/ethereum/soundcalc), formula for formula
//! and in the same floating-point order, so that soundcalc, fed the TOML
//! [`soundcalc_toml`] writes, prints the same per-round bits (`docs/protocol.md` §6
//! derives them and pins the agreement). With n trace rows, N = n/ρ LDE points, F = p³,
//! B = 2W + C functions batched by DEEP, a_i the FRI rounds' arities, q queries, g grinding
//! bits:
//!
//! - **UDR**: δ = (1 − ρ)/2 and ε(N') = (δN' + 1)/|F| (BCHKS25, Cor. 1.4), list size 1;
//! - **JBR**: gap η, δ = 1 − √ρ − η, m = max(⌈√ρ/(2η)⌉, 3), list size L = 1/(2η√ρ) and
//!   ε(N') = ((2(m + ½)^5 + 3(m + ½)δρ)·N'/(3ρ√ρ) + (m + ½)/√ρ)/|F| (BCHKS25, Thm 4.2); η is
//!   chosen as √ρ/(2m) for the m in 3..=256 that maximises the total, and published with the
//!   figure (soundcalc's `gap_to_radius`);
//! - rounds: batching (B − 1)·ε(N); FRI round i (a_i − 1)·ε(N_i) on the domain after the
//!   fold; the query phase q·(−log2(1 − δ)) + g bits; ALI L·K/|F| (K constraints); DEEP
//!   L·(d(n + 1) + n − 1)/(|F| − n − N) (d the constraints' degree, two opening points).
//!
//! Every figure is also capped by the Merkle hash's 128-bit collision resistance, reported
//! as its own line: Keccak-256's, or Poseidon2's with its 4-element digests (soundcalc's
//! `hash_size_bits = 256`, as for ZisK's; p⁴ is 2^255.99).

use std::fmt;
use std::str::FromStr;

use ballast_air::{Air, ConstraintInfo};

use crate::MAX_QUERIES;
use crate::proof::segment_geometry;
use crate::{Geometry, ParamsError, StarkParams, TableAir};

/// Both Merkle hashes' digests are 256 bits (Keccak-256's, and Poseidon2's four elements),
/// so 128-bit collision resistance, which caps every security claim.
pub const HASH_COLLISION_BITS: u32 = 128;

/// The points each committed polynomial is opened at: z and z·ω.
const OPENING_POINTS: f64 = 2.0;
/// The largest m the Johnson-bound gap is searched over.
const MAX_JOHNSON_M: u32 = 256;

/// How a security figure is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Regime {
    /// Provable, up to the Johnson bound (the field's headline figure).
    Jbr,
    /// Provable, in the unique-decoding regime.
    Udr,
    /// The ethSTARK conjecture: each query is worth log2 of the blowup.
    Conjectured,
}

impl Regime {
    /// Every regime, the default first.
    pub const ALL: [Regime; 3] = [Regime::Jbr, Regime::Udr, Regime::Conjectured];

    /// The name flags and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Regime::Jbr => "jbr",
            Regime::Udr => "udr",
            Regime::Conjectured => "conjectured",
        }
    }
}

impl fmt::Display for Regime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Regime {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Regime::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("{s:?} is not a regime (jbr, udr, conjectured)"))
    }
}

/// What the analysis reads of a statement: the shape of its segments and its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Circuit {
    /// log2 of a segment's rows.
    pub log_rows: usize,
    /// Trace columns, W.
    pub columns: usize,
    /// Constraints, K.
    pub constraints: usize,
    /// The constraints' largest degree, d.
    pub max_degree: usize,
    /// Functions DEEP batches: 2W + C (each trace column at z and z·ω, each quotient
    /// column at z).
    pub batch_size: usize,
    /// The soundness parameters.
    pub params: StarkParams,
    /// The rows of the shorter tables its FRI rolls in, as bits (bit k: tables of 2^k
    /// rows, k below `log_rows`): none for a segment; a tables proof's bound
    /// ([`TablesCircuit::bound`]) sets them.
    pub rolled_in: u64,
}

/// One round of the protocol and the bits it contributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// soundcalc's name for it: "batching", "commit round 1", …, "query phase", "ALI",
    /// "DEEP"; for the conjectured figure, "query phase" and "field".
    pub name: String,
    /// −log2 of its error, unfloored.
    pub bits: f64,
}

/// A regime's verdict on a circuit.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// Every round, in protocol order.
    pub rounds: Vec<Round>,
    /// The weakest round's bits, rounded down (0 for parameters the analysis does not cover).
    pub total: u32,
    /// The Johnson-bound m and the gap η (≈ √ρ/(2m)) the JBR figure uses, as given to
    /// soundcalc (`gap_to_radius`).
    pub johnson: Option<(u32, f64)>,
}

impl Analysis {
    /// The analysis of `rounds`, its verdict their [`total`].
    fn new(rounds: Vec<Round>, valid: bool, johnson: Option<(u32, f64)>) -> Self {
        let bits: Vec<f64> = rounds.iter().map(|r| r.bits).collect();
        Self {
            total: total(&bits, valid),
            rounds,
            johnson,
        }
    }

    /// The round that binds: the one with the fewest bits.
    pub fn binding(&self) -> Option<&Round> {
        self.rounds.iter().min_by(|a, b| a.bits.total_cmp(&b.bits))
    }

    /// The total, capped by the hash's collision resistance.
    pub fn capped(&self) -> u32 {
        self.total.min(HASH_COLLISION_BITS)
    }
}

/// |F_p^3| as soundcalc computes it: p converted to f64, cubed.
fn field_size() -> f64 {
    (ballast_field::Felt::MODULUS as f64).powf(3.0)
}

fn bits(error: f64) -> f64 {
    -error.log2()
}

/// The weakest of rounds' bits.
fn weakest(bits: &[f64]) -> f64 {
    bits.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The verdict of rounds' bits: the weakest, rounded down, or 0 where the analysis does not
/// cover the parameters (`valid` false).
fn total(bits: &[f64], valid: bool) -> u32 {
    if valid {
        weakest(bits).max(0.0).floor() as u32
    } else {
        0
    }
}

impl Circuit {
    /// The circuit of a segment proving `air` with `params`.
    ///
    /// # Errors
    /// Parameters the AIR cannot use, or a malformed AIR.
    pub fn of<A: Air>(air: &A, params: &StarkParams) -> Result<Self, ParamsError> {
        let info = ConstraintInfo::of(air)?;
        let shape = segment_geometry(air, &info, params)?;
        Ok(Self::of_shape(&info, &shape, params))
    }

    /// The circuit of an AIR whose constraints (`info`) and shape with `params` are known.
    pub(crate) fn of_shape(info: &ConstraintInfo, shape: &Geometry, params: &StarkParams) -> Self {
        Self {
            log_rows: shape.log_rows,
            columns: shape.width,
            constraints: info.constraints.len(),
            max_degree: info.max_degree() as usize,
            batch_size: 2 * shape.width + shape.quotient_width(),
            params: *params,
            rolled_in: 0,
        }
    }

    /// The FRI rounds' folding factors, as soundcalc's `fri_folding_factors`: rounds that
    /// stop at its LDE's size and at each rolled-in table's (`ballast_fri::roll_in_arities`).
    pub fn fri_folding_factors(&self) -> Vec<usize> {
        let log_rows = std::iter::once(self.log_rows).chain(self.rolled());
        crate::tables::fri_arities(log_rows, &self.params)
            .iter()
            .map(|&log_arity| 1 << log_arity)
            .collect()
    }

    /// log2 of the rows of each table rolled in, tallest first.
    fn rolled(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.log_rows)
            .rev()
            .filter(|k| self.rolled_in >> k & 1 == 1)
    }

    /// log2 of the rows of its shortest table: its own, or the shortest one rolled in.
    fn shortest_log_rows(&self) -> usize {
        self.rolled().last().unwrap_or(self.log_rows)
    }

    /// The domain size FRI stops folding at, as soundcalc's `fri_early_stop_degree`.
    pub fn fri_early_stop_degree(&self) -> usize {
        1 << (self.params.log_final_poly_len + self.params.log_blowup)
    }

    /// The figure in `regime`; for JBR, with the best gap.
    pub fn analyse(&self, regime: Regime) -> Analysis {
        match regime {
            Regime::Jbr => {
                let provable = Provable::new(self);
                let key = |m: u32| {
                    let (bits, valid, _) = provable.round_bits(Some(m));
                    (total(&bits, valid), weakest(&bits))
                };
                let best = (3..=MAX_JOHNSON_M)
                    .map(|m| (m, key(m)))
                    .max_by(|(_, a), (_, b)| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
                    .map(|(m, _)| m)
                    .expect("a non-empty range of m");
                provable.analysis(Some(best))
            }
            Regime::Udr => Provable::new(self).analysis(None),
            Regime::Conjectured => self.conjectured(),
        }
    }

    /// The ethSTARK conjecture: each query worth log2 of the blowup, plus grinding; the
    /// challenges from F_p^3 err with probability about B·N/|F| (DEEP's batching, the
    /// largest).
    fn conjectured(&self) -> Analysis {
        let p = self.params;
        let log_domain = (self.log_rows + p.log_blowup) as f64;
        let rounds = vec![
            Round {
                name: "query phase".into(),
                bits: (p.num_queries * p.log_blowup) as f64 + f64::from(p.pow_bits),
            },
            Round {
                name: "field".into(),
                bits: field_size().log2() - log_domain - (self.batch_size as f64).log2(),
            },
        ];
        Analysis::new(rounds, true, None)
    }

    /// The same circuit with `num_queries` queries.
    pub fn with_queries(&self, num_queries: usize) -> Circuit {
        Circuit {
            params: StarkParams {
                num_queries,
                ..self.params
            },
            ..*self
        }
    }

    /// The circuit of `air`'s segments proven with `params` but for the number of queries:
    /// the fewest that reach `target` bits in `regime` (what `cli prove --security-bits`
    /// chooses).
    ///
    /// # Errors
    /// A target above the hash's collision resistance, one no number of queries up to
    /// [`MAX_QUERIES`] reaches (naming the round that caps it), or parameters the AIR cannot
    /// use.
    pub fn for_target<A: Air>(
        air: &A,
        params: &StarkParams,
        target: u32,
        regime: Regime,
    ) -> Result<Self, ParamsError> {
        let mut tables =
            TablesCircuit::for_target(&[air as &dyn TableAir], params, target, regime)?.tables;
        Ok(tables.remove(0))
    }

    /// The fewest queries (at most `max_queries`) with which `regime`'s figure reaches
    /// `target` bits, the other parameters unchanged; `None` if no count does.
    pub fn min_queries(&self, target: u32, regime: Regime, max_queries: usize) -> Option<usize> {
        fewest_queries(target, max_queries, |q| {
            self.with_queries(q).analyse(regime).total
        })
    }

    /// The circuit's keys in soundcalc's form, values written as TOML (and JSON) literals.
    pub fn soundcalc_fields(&self) -> Vec<(&'static str, String)> {
        let p = self.params;
        let list = |v: Vec<usize>| {
            let items: Vec<String> = v.iter().map(ToString::to_string).collect();
            format!("[{}]", items.join(", "))
        };
        let mut fields = vec![
            ("trace_length", (1usize << self.log_rows).to_string()),
            ("rho", format!("{:?}", 1.0 / 2f64.powi(p.log_blowup as i32))),
            ("air_max_degree", self.max_degree.to_string()),
            ("num_columns", self.columns.to_string()),
            ("num_constraints", self.constraints.to_string()),
            ("opening_points", (OPENING_POINTS as usize).to_string()),
            ("batch_size", self.batch_size.to_string()),
            ("power_batching", "true".into()),
            ("num_queries", p.num_queries.to_string()),
            ("fri_folding_factors", list(self.fri_folding_factors())),
            (
                "fri_early_stop_degree",
                self.fri_early_stop_degree().to_string(),
            ),
            ("grinding_query_phase", p.pow_bits.to_string()),
        ];
        if let Some((_, eta)) = self.analyse(Regime::Jbr).johnson {
            // The shortest decimal that reads back as the same f64, as Python's repr does.
            fields.push(("gap_to_radius", format!("{eta:?}")));
        }
        fields
    }
}

/// soundcalc's description of a system of `circuits` (a `[zkevm]` table and a
/// `[[circuits]]` of each, named, in order), each with the gap its JBR figure uses, so that
/// soundcalc recomputes ballast's figures.
pub fn soundcalc_toml(circuits: &[(&str, &Circuit)]) -> String {
    let mut toml = String::from(
        "[zkevm]\nname = \"ballast\"\nprotocol_family = \"FRI_STARK\"\n\
         field = \"Goldilocks^3\"\nhash_size_bits = 256\n",
    );
    for (name, circuit) in circuits {
        toml.push_str(&format!("\n[[circuits]]\nname = {name:?}\n"));
        for (key, value) in circuit.soundcalc_fields() {
            toml.push_str(&format!("{key} = {value}\n"));
        }
    }
    toml
}

/// The fewest queries (at most `max_queries`) whose figure, `total(q)`, reaches `target`.
/// The figure never falls as queries are added: a binary search.
fn fewest_queries(target: u32, max_queries: usize, total: impl Fn(usize) -> u32) -> Option<usize> {
    if total(max_queries) < target {
        return None;
    }
    let (mut low, mut high) = (1usize, max_queries);
    while low < high {
        let mid = (low + high) / 2;
        if total(mid) >= target {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Some(low)
}

/// The gap η soundcalc reads back as exactly `m`: √ρ/(2m), nudged up (relatively) by 10⁻⁹
/// so that its own float round trip does not land on m + 1.
fn johnson_gap(log_blowup: usize, m: u32) -> f64 {
    let rho = 1.0 / 2f64.powi(log_blowup as i32);
    rho.sqrt() / (2.0 * f64::from(m)) * (1.0 + 1e-9)
}

/// The provable rounds of a circuit, soundcalc's. What does not depend on the radius is
/// read once, for JBR's search over m.
struct Provable<'a> {
    circuit: &'a Circuit,
    /// The FRI rounds' folding factors.
    folding: Vec<usize>,
}

impl<'a> Provable<'a> {
    fn new(circuit: &'a Circuit) -> Self {
        Self {
            circuit,
            folding: circuit.fri_folding_factors(),
        }
    }

    /// The rounds at the radius of UDR (`None`) or of JBR with m = `m`, named.
    fn analysis(&self, m: Option<u32>) -> Analysis {
        let (bits, valid, johnson) = self.round_bits(m);
        let names = std::iter::once("batching".to_string())
            .chain((1..=self.folding.len()).map(|i| format!("commit round {i}")))
            .chain(["query phase", "ALI", "DEEP"].map(String::from));
        let rounds = names
            .zip(bits)
            .map(|(name, bits)| Round { name, bits })
            .collect();
        Analysis::new(rounds, valid, johnson)
    }

    /// Each round's bits in protocol order (batching, the commit rounds, the query phase,
    /// ALI, DEEP), whether the out-of-domain points stay within the radius (on its shortest
    /// table's domain too), and the Johnson-bound m and gap.
    fn round_bits(&self, m: Option<u32>) -> (Vec<f64>, bool, Option<(u32, f64)>) {
        let c = self.circuit;
        let p = c.params;
        let f = field_size();
        let size = |log_rows: usize| {
            let n = 2f64.powi(log_rows as i32);
            (n, n * 2f64.powi(p.log_blowup as i32))
        };
        let rho = 1.0 / 2f64.powi(p.log_blowup as i32);
        let s = rho.sqrt();
        let (delta, list, johnson, error): (f64, f64, _, Box<dyn Fn(f64) -> f64>) = match m {
            None => {
                let delta = (1.0 - rho) / 2.0;
                (delta, 1.0, None, Box::new(move |d| (delta * d + 1.0) / f))
            }
            Some(m) => {
                let gap = johnson_gap(p.log_blowup, m);
                let delta = 1.0 - s - gap;
                // soundcalc recomputes the gap from δ: keep its rounding.
                let eta = 1.0 - s - delta;
                let m = (s / (2.0 * eta)).ceil().max(3.0);
                let mh = m + 0.5;
                let mh5 = mh.powf(5.0);
                let list = 1.0 / (2.0 * eta * s);
                let error = move |d: f64| {
                    ((2.0 * mh5 + 3.0 * mh * (delta * rho)) * d / (3.0 * rho * s) + mh / s) / f
                };
                (delta, list, Some((m as u32, gap)), Box::new(error))
            }
        };
        let (n, domain) = size(c.log_rows);
        // Batching, the commit rounds, the query phase, ALI and DEEP.
        let mut rounds = Vec::with_capacity(self.folding.len() + 4);
        rounds.push(bits(error(domain) * (c.batch_size as f64 - 1.0)));
        let mut folded = domain;
        for &arity in &self.folding {
            folded /= arity as f64;
            rounds.push(bits(error(folded) * (arity as f64 - 1.0)));
        }
        rounds.push(p.num_queries as f64 * -(1.0 - delta).log2() + f64::from(p.pow_bits));
        rounds.push(bits(list * c.constraints as f64 / f));
        let d = c.max_degree as f64;
        rounds.push(bits(
            list * (d * (n + OPENING_POINTS - 1.0) + (n - 1.0)) / (f - n - domain),
        ));
        // The out-of-domain points must stay within the decoding radius, on every table's
        // domain: the shortest's is the tightest.
        let within = |(n, domain): (f64, f64)| n + OPENING_POINTS < (1.0 - delta) * domain;
        let valid = within(size(c.log_rows)) && within(size(c.shortest_log_rows()));
        (rounds, valid, johnson)
    }
}

/// What the analysis reads of one proof of several tables (`prove_tables`): each table's
/// circuit, tallest first, all with the same parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablesCircuit {
    /// The tables' circuits, tallest first.
    pub tables: Vec<Circuit>,
}

impl TablesCircuit {
    /// The circuit of one proof of `airs`' tables (tallest first) with `params`.
    ///
    /// # Errors
    /// No tables, tables not tallest first, parameters an AIR cannot use, or a
    /// malformed AIR.
    pub fn of(airs: &[&dyn TableAir], params: &StarkParams) -> Result<Self, ParamsError> {
        let mut tables: Vec<Circuit> = Vec::with_capacity(airs.len());
        for (k, &air) in airs.iter().enumerate() {
            // Tables of one AIR instance (a node's alike children's) share its circuit.
            let same = |&other: &&dyn TableAir| std::ptr::eq(other, air);
            let circuit = match airs[..k].iter().position(same) {
                Some(j) => tables[j],
                None => {
                    let info = air.info()?;
                    Circuit::of_shape(&info, &air.geometry(&info, params)?, params)
                }
            };
            tables.push(circuit);
        }
        if tables.is_empty() || tables.windows(2).any(|w| w[0].log_rows < w[1].log_rows) {
            return Err(ParamsError::TablesOrder);
        }
        Ok(Self { tables })
    }

    /// The one circuit whose rounds dominate the tables proof's (`docs/protocol.md` §6
    /// item 14): each of the proof's round errors is at most one of its, so its weakest
    /// round and its sum are too. It has the tallest table's rows and parameters, every
    /// table's columns, constraints and batched functions (at least one more than the
    /// largest arity when a table rolls in, so that its batching round covers a roll-in
    /// round's a·ε), a degree of Σd + T − 1 for T tables (its DEEP term covers each
    /// table's), and FRI's rounds stopping at every table's size. One table is its own
    /// bound. soundcalc, given its TOML, recomputes the tables' figure.
    pub fn bound(&self) -> Circuit {
        let tallest = self.tables[0];
        let sum = |field: fn(&Circuit) -> usize| self.tables.iter().map(field).sum::<usize>();
        let rolled_in = self.tables[1..]
            .iter()
            .filter(|c| c.log_rows < tallest.log_rows)
            .fold(0u64, |bits, c| bits | 1 << c.log_rows);
        let circuit = Circuit {
            columns: sum(|c| c.columns),
            constraints: sum(|c| c.constraints),
            max_degree: sum(|c| c.max_degree) + self.tables.len() - 1,
            batch_size: sum(|c| c.batch_size),
            rolled_in,
            ..tallest
        };
        let covers_a_roll_in = match circuit.fri_folding_factors().iter().max() {
            Some(&arity) if rolled_in != 0 => arity + 1,
            _ => 0,
        };
        Circuit {
            batch_size: circuit.batch_size.max(covers_a_roll_in),
            ..circuit
        }
    }

    /// The figure in `regime`: its [`bound`](Self::bound)'s.
    pub fn analyse(&self, regime: Regime) -> Analysis {
        self.bound().analyse(regime)
    }

    /// The same tables with `num_queries` queries.
    pub fn with_queries(&self, num_queries: usize) -> Self {
        Self {
            tables: self
                .tables
                .iter()
                .map(|c| c.with_queries(num_queries))
                .collect(),
        }
    }

    /// The tables of `airs` proven with `params` but for the number of queries: the fewest
    /// that reach `target` bits in `regime`.
    ///
    /// # Errors
    /// As [`Circuit::for_target`].
    pub fn for_target(
        airs: &[&dyn TableAir],
        params: &StarkParams,
        target: u32,
        regime: Regime,
    ) -> Result<Self, ParamsError> {
        if target > HASH_COLLISION_BITS {
            return Err(ParamsError::TargetTooHigh {
                target,
                max: HASH_COLLISION_BITS,
            });
        }
        let tables = Self::of(
            airs,
            &StarkParams {
                num_queries: 1,
                ..*params
            },
        )?;
        let total = |q| tables.with_queries(q).analyse(regime).total;
        let Some(num_queries) = fewest_queries(target, MAX_QUERIES, total) else {
            let most = tables.with_queries(MAX_QUERIES).analyse(regime);
            return Err(ParamsError::Unreachable {
                target,
                regime,
                blowup: 1 << params.log_blowup,
                pow_bits: params.pow_bits,
                binding: most.binding().map_or("", |r| r.name.as_str()).to_owned(),
                cap: most.total,
            });
        };
        Ok(tables.with_queries(num_queries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MerkleHash;

    /// The keccak chain's segment of 2^14 rows: 2,353 columns, 3,109 constraints of degree
    /// 3, two quotient chunks (B = 2·2,353 + 6).
    fn keccak(log_blowup: usize, num_queries: usize, pow_bits: u32) -> Circuit {
        Circuit {
            log_rows: 14,
            columns: 2353,
            constraints: 3109,
            max_degree: 3,
            batch_size: 2 * 2353 + 6,
            params: StarkParams {
                log_blowup,
                num_queries,
                pow_bits,
                log_final_poly_len: StarkParams::DEFAULT_LOG_FINAL_POLY_LEN,
                hash: MerkleHash::Keccak256,
            },
            rolled_in: 0,
        }
    }

    fn fibonacci_2_19() -> Circuit {
        // 16 sequences × 2^19 rows: 32 columns, 96 constraints of degree 1, one quotient chunk.
        Circuit {
            log_rows: 19,
            columns: 32,
            constraints: 96,
            max_degree: 1,
            batch_size: 2 * 32 + 3,
            params: StarkParams::lambda_vm_bench(),
            rolled_in: 0,
        }
    }

    /// soundcalc's per-round bits (batching, the FRI rounds, query phase, ALI, DEEP) and
    /// total, UDR then JBR, for the TOML [`soundcalc_toml`] writes (a tables proof's: its
    /// bound's, `cli security --proof`'s `last`) — computed once
    /// with soundcalc at commit 809896fb8d3aba4fd8f657c781601e3ef2b968dd (2026-05-14) by
    /// `zkVM.load_from_toml(path)`, each circuit's `get_security_levels()`.
    type Pin = (&'static [u32], u32, &'static [u32], u32);

    const KECCAK_PINS: [((usize, usize, u32), Pin); 11] = [
        // The default statement's parameters (StarkParams::for_security at 128 bits).
        (
            (1, 227, 16),
            (
                &[166, 179, 182, 185, 188, 110, 180, 175],
                110,
                &[128, 140, 143, 146, 149, 128, 172, 167],
                128,
            ),
        ),
        (
            (1, 84, 16),
            (
                &[166, 179, 182, 185, 188, 50, 180, 175],
                50,
                &[123, 136, 139, 142, 145, 57, 171, 166],
                57,
            ),
        ),
        (
            (1, 219, 0),
            (
                &[166, 179, 182, 185, 188, 90, 180, 175],
                90,
                &[123, 136, 139, 142, 145, 108, 171, 166],
                108,
            ),
        ),
        (
            (2, 128, 16),
            (
                &[165, 177, 180, 183, 186, 102, 180, 175],
                102,
                &[139, 151, 154, 157, 161, 139, 174, 169],
                139,
            ),
        ),
        (
            (3, 80, 16),
            (
                &[163, 176, 179, 182, 185, 82, 180, 175],
                82,
                &[134, 146, 149, 152, 155, 134, 172, 168],
                134,
            ),
        ),
        (
            (1, 231, 16),
            (
                &[166, 179, 182, 185, 188, 111, 180, 175],
                111,
                &[130, 142, 145, 148, 151, 129, 172, 168],
                129,
            ),
        ),
        (
            (2, 114, 16),
            (
                &[165, 177, 180, 183, 186, 93, 180, 175],
                93,
                &[129, 141, 144, 147, 150, 129, 171, 167],
                129,
            ),
        ),
        (
            (3, 76, 16),
            (
                &[163, 176, 179, 182, 185, 79, 180, 175],
                79,
                &[129, 141, 144, 147, 150, 129, 171, 167],
                129,
            ),
        ),
        (
            (4, 57, 16),
            (
                &[162, 175, 178, 181, 184, 68, 180, 175],
                68,
                &[129, 141, 144, 147, 150, 129, 170, 166],
                129,
            ),
        ),
        // Blowups 32 and 64, the widest (a recursive proof's last layer's), at 128 bits.
        (
            (5, 46, 16),
            (
                &[161, 174, 177, 180, 183, 59, 180, 175],
                59,
                &[129, 142, 145, 148, 151, 129, 170, 166],
                129,
            ),
        ),
        (
            (6, 38, 16),
            (
                &[160, 173, 176, 179, 182, 53, 180, 175],
                53,
                &[128, 141, 144, 147, 150, 128, 169, 165],
                128,
            ),
        ),
    ];

    const FIBONACCI_PIN: Pin = (
        &[167, 174, 177, 180, 183, 186, 189, 90, 185, 171],
        90,
        &[125, 131, 134, 137, 140, 143, 147, 108, 176, 163],
        108,
    );

    /// The bound of a compressed proof's last layer at its defaults (blowup 64, 28 grinding
    /// bits, 34 queries), over tables of 2^15, 2^12 and 2^8 rows: FRI stops at each.
    fn last_layer_bound() -> Circuit {
        Circuit {
            log_rows: 15,
            columns: 447,
            constraints: 629,
            max_degree: 19,
            batch_size: 948,
            params: StarkParams {
                log_blowup: 6,
                num_queries: 34,
                pow_bits: 28,
                log_final_poly_len: 8,
                hash: MerkleHash::Keccak256,
            },
            rolled_in: 1 << 12 | 1 << 8,
        }
    }

    const LAST_LAYER_PIN: Pin = (
        &[162, 172, 175, 179, 61, 182, 172],
        61,
        &[129, 139, 142, 145, 129, 172, 161],
        129,
    );

    fn check(what: &str, circuit: &Circuit, (udr, udr_total, jbr, jbr_total): Pin) {
        for (regime, rounds, total) in
            [(Regime::Udr, udr, udr_total), (Regime::Jbr, jbr, jbr_total)]
        {
            let got = circuit.analyse(regime);
            let floors: Vec<u32> = got.rounds.iter().map(|r| r.bits.floor() as u32).collect();
            assert_eq!(floors, rounds, "{what} {regime}: rounds");
            assert_eq!(got.total, total, "{what} {regime}: total");
        }
    }

    #[test]
    fn figures_agree_with_soundcalc_round_by_round() {
        for ((b, q, g), pin) in KECCAK_PINS {
            check(
                &format!("keccak 2^14 at {}/{q}/{g}", 1 << b),
                &keccak(b, q, g),
                pin,
            );
        }
        check(
            "fibonacci 16 × 2^19 at 2/219/0",
            &fibonacci_2_19(),
            FIBONACCI_PIN,
        );
        let last = last_layer_bound();
        assert_eq!(last.fri_folding_factors(), [8, 8, 2]);
        assert_eq!(last.fri_early_stop_degree(), 16384);
        check("a last layer's bound at 64/34/28", &last, LAST_LAYER_PIN);
    }

    #[test]
    fn the_toml_names_the_gap_the_figure_uses() {
        let circuit = keccak(2, 114, 16);
        let toml = soundcalc_toml(&[("keccak", &circuit)]);
        let (m, eta) = circuit.analyse(Regime::Jbr).johnson.unwrap();
        assert!(toml.contains(&format!("gap_to_radius = {eta:?}")), "{toml}");
        assert!(
            toml.contains("fri_folding_factors = [8, 8, 8, 4]"),
            "{toml}"
        );
        assert!(toml.contains("fri_early_stop_degree = 32"), "{toml}");
        assert!(toml.contains("batch_size = 4712"), "{toml}");
        // soundcalc derives m = max(⌈√ρ/(2η)⌉, 3) from the gap: the same m.
        let rho: f64 = 0.25;
        let delta = 1.0 - rho.sqrt() - eta;
        assert_eq!(
            (rho.sqrt() / (2.0 * (1.0 - rho.sqrt() - delta))).ceil() as u32,
            m
        );
    }

    #[test]
    fn queries_for_a_target_are_the_fewest_that_reach_it() {
        let circuit = keccak(2, 1, 16);
        for regime in Regime::ALL {
            let q = circuit.min_queries(128, regime, 1024).unwrap();
            let with = |q| circuit.with_queries(q).analyse(regime).total;
            assert!(with(q) >= 128 && with(q - 1) < 128, "{regime}: {q}");
        }
        assert_eq!(circuit.min_queries(200, Regime::Jbr, 1024), None);
        assert_eq!(
            circuit.min_queries(128, Regime::Conjectured, 1024),
            Some(56)
        );
    }

    #[test]
    fn the_conjectured_figure_counts_queries_grinding_and_the_field() {
        let got = keccak(1, 84, 16).analyse(Regime::Conjectured);
        assert_eq!(got.rounds[0].bits, 100.0);
        // log2 |F| − log2 N − log2 B = 192 − 15 − log2 4712.
        assert!((got.rounds[1].bits - (192.0 - 15.0 - 4712f64.log2())).abs() < 1e-6);
        assert_eq!((got.total, got.capped()), (100, 100));
        assert_eq!(keccak(1, 219, 0).analyse(Regime::Conjectured).capped(), 128);
    }

    /// The keccak segment's circuit with the rows of a shorter table: 2^`log_rows`.
    fn shorter(log_rows: usize, params: StarkParams) -> Circuit {
        Circuit {
            log_rows,
            columns: 84,
            constraints: 120,
            max_degree: 2,
            batch_size: 2 * 84 + 6,
            params,
            rolled_in: 0,
        }
    }

    #[test]
    fn tables_are_bounded_by_one_circuit_that_covers_every_tables_terms() {
        let tall = keccak(1, 200, 16);
        let short = shorter(11, tall.params);
        let tables = TablesCircuit {
            tables: vec![tall, short],
        };
        let bound = tables.bound();
        assert_eq!(
            (bound.log_rows, bound.columns, bound.constraints),
            (14, 2353 + 84, 3109 + 120)
        );
        assert_eq!(
            (bound.max_degree, bound.batch_size),
            (3 + 2 + 1, 4712 + 174)
        );
        // LDEs of 2^15 and 2^12 down to 2^4: rounds of 8 (to 2^12, where the short table
        // rolls in), then 8, 8 and 4.
        assert_eq!(bound.fri_folding_factors(), [8, 8, 8, 4]);
        assert_eq!(bound.rolled_in, 1 << 11);
        // Every term of the tables proof (§6 item 14), in UDR where ε is explicit, is
        // covered by the bound's round that takes it over.
        let udr = tables.analyse(Regime::Udr);
        let f = field_size();
        let eps = |n: f64| (0.25 * n + 1.0) / f;
        let error = |round: usize| 2f64.powf(-udr.rounds[round].bits);
        // Batching: the tall height's 4,711, the short one's 173 and its roll-in's 1.
        let batched = eps(32768.0) * 4711.0 + eps(4096.0) * (173.0 + 1.0);
        assert!(error(0) >= batched);
        assert!((error(0) - eps(32768.0) * 4885.0).abs() <= 1e-9 * error(0));
        assert!((error(1) - eps(4096.0) * 7.0).abs() <= 1e-9 * error(1));
        let deep = |c: &Circuit| {
            let n = 2f64.powi(c.log_rows as i32);
            (c.max_degree as f64 * (n + 1.0) + n - 1.0) / (f - n - 2.0 * n)
        };
        assert!(
            (error(6) - (3109.0 + 120.0) / f).abs() <= 1e-9 * error(6),
            "ALI"
        );
        assert!(
            error(7) >= deep(&tall) + deep(&short),
            "DEEP covers both tables"
        );
        assert_eq!(
            udr.rounds[5],
            tall.analyse(Regime::Udr).rounds[5],
            "the query phase"
        );
        // Two tables of one height batch all their functions at once, and roll in as one.
        let shared = TablesCircuit {
            tables: vec![tall, short, short],
        };
        assert_eq!(shared.bound().rolled_in, 1 << 11);
        assert_eq!(shared.bound().fri_folding_factors(), [8, 8, 8, 4]);
        // One table is its own bound; more tables never give more bits than their tallest.
        for regime in Regime::ALL {
            let one = TablesCircuit { tables: vec![tall] };
            assert_eq!(one.bound(), tall);
            assert_eq!(one.analyse(regime), tall.analyse(regime));
            assert!(tables.analyse(regime).total <= tall.analyse(regime).total);
        }
    }

    #[test]
    fn tables_find_their_queries_and_refuse_a_bad_order() {
        let air = |log_rows| crate::test_air::CounterAir { log_rows };
        let (tall, short) = (air(12), air(9));
        let params = StarkParams {
            log_blowup: 2,
            num_queries: 1,
            pow_bits: 16,
            log_final_poly_len: 3,
            hash: MerkleHash::Poseidon2,
        };
        let found = TablesCircuit::for_target(&[&tall, &short], &params, 100, Regime::Jbr).unwrap();
        let q = found.tables[0].params.num_queries;
        assert!(found.analyse(Regime::Jbr).total >= 100);
        assert!(found.with_queries(q - 1).analyse(Regime::Jbr).total < 100);
        assert_eq!(
            TablesCircuit::of(&[&short, &tall], &params),
            Err(ParamsError::TablesOrder)
        );
        assert!(TablesCircuit::of(&[&short, &short], &params).is_ok());
        assert!(TablesCircuit::for_target(&[&tall], &params, 129, Regime::Jbr).is_err());
    }

    #[test]
    fn a_table_rolled_in_after_the_last_round_stops_fri_there() {
        // A final polynomial as long as the short table (a recursive proof's last layer):
        // FRI folds 2^14 points by 8 once, to the short table's 2^11, where it stops.
        let air = |log_rows| crate::test_air::CounterAir { log_rows };
        let (tall, short) = (air(12), air(9));
        let params = StarkParams {
            log_blowup: 2,
            num_queries: 40,
            pow_bits: 0,
            log_final_poly_len: 9,
            hash: MerkleHash::Keccak256,
        };
        let bound = |airs: &[&dyn TableAir]| TablesCircuit::of(airs, &params).unwrap().bound();
        let (alone, both) = (bound(&[&tall]), bound(&[&tall, &short]));
        assert_eq!(alone.fri_folding_factors(), [8]);
        assert_eq!(both.fri_folding_factors(), [8]);
        assert_eq!(both.batch_size, 2 * alone.batch_size);
        // Tables that batch fewer functions than that round's 8: the bound's batching
        // counts 8 + 1, so that it covers the round that rolls the short one in at 8·ε.
        let tiny = |log_rows| Circuit {
            log_rows,
            columns: 1,
            constraints: 1,
            max_degree: 1,
            batch_size: 3,
            params,
            rolled_in: 0,
        };
        let tables = |log_rows: &[usize]| TablesCircuit {
            tables: log_rows.iter().map(|&l| tiny(l)).collect(),
        };
        assert_eq!(tables(&[12, 9]).bound().batch_size, 9);
        assert_eq!(tables(&[12, 12]).bound().batch_size, 6, "nothing rolled in");
        let fields = both.soundcalc_fields();
        assert!(fields.contains(&("fri_folding_factors", "[8]".to_string())));
    }
}
