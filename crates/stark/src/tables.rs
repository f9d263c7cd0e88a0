//! One proof of several tables of different heights, each with its AIR and public inputs,
//! at one blowup: one trace tree and one quotient tree over all of them (mixed-height trees,
//! `ballast_merkle::MixedTree`), one α, one z and one γ, and one FRI that rolls each shorter
//! table's DEEP function in where the folds reach its size. `docs/protocol.md` §6 item 14
//! argues it; a recursive layer's tables are what it is for. Its security figure is
//! [`TablesCircuit`](crate::TablesCircuit)'s; its bytes are a
//! [`TablesRecord`](crate::TablesRecord)'s. Tables of one
//! height share a leaf and a FRI input: one DEEP function, as if their columns,
//! concatenated, were one table's. Tables take their AIRs as [`TableAir`]s, which every
//! [`Air`] is: tables of different AIRs share a proof, each AIR's code compiled once, as for
//! its segments.

use std::ops::Range;

use ballast_air::{Air, AirError, ConstraintInfo, check_trace, known_columns};
use ballast_field::{ColumnMajor, Ext3, Felt, RowBlocks};
use ballast_fri::{
    FriCommitment, FriError, FriVerifierInput, HostLayers, QueryPlan, commit_phase,
    roll_in_arities, verify_queries,
};
use ballast_merkle::{Digest, MerkleHash, MixedShape, MixedTree, TableShape, verify_mixed};
use ballast_ntt::{LdePlan, bit_reverse, from_cosets};
use thiserror::Error;

use crate::backend::quotient_columns;
use crate::deep::{DeepSum, height_deep_coefficients};
use crate::ood::raw_at;
use crate::periodic::{LagrangeAt, PeriodicAt, PeriodicPolys};
use crate::proof::segment_geometry;
use crate::protocol::{
    Run, absorb_pow_nonce, air_key, bind_tables, distinct, draw_alpha, draw_gamma, draw_ood_point,
    ood_identity_holds, query_draws, work_and_draws,
};
use crate::quotient::Composition;
use crate::verifier::Challenges;
use crate::{
    Circuit, DeepCoefficients, Geometry, OodValues, ParamsError, ProverError, QueryOpenings,
    StarkParams, TablesCircuit, TranscriptLayout, VerifierError, VerifyPolicy,
};

/// A table's AIR as a tables proof uses it. Object-safe, so that tables of different AIRs
/// share one proof; every [`Air`] is one, through the same code its segments run.
pub trait TableAir: Sync {
    /// How many public inputs it reads ([`Air::num_public_inputs`]).
    fn public_input_count(&self) -> usize;
    /// Its constraints' domains and degrees.
    ///
    /// # Errors
    /// A malformed AIR.
    fn info(&self) -> Result<ConstraintInfo, ParamsError>;
    /// Its key, which the transcript binds (`docs/protocol.md` §4).
    fn key(&self, info: &ConstraintInfo) -> Digest;
    /// Its shape with `params`, once they are checked against it.
    ///
    /// # Errors
    /// Parameters the AIR cannot be proven with.
    fn geometry(
        &self,
        info: &ConstraintInfo,
        params: &StarkParams,
    ) -> Result<Geometry, ParamsError>;
    /// The quotient's evaluations on its coset g·H_q (natural order), the constraints
    /// combined with α's powers, from the trace's columns' polynomials (raw form,
    /// [`LdePlan::raw_columns`]), extended a coset of g·H_q at a time.
    fn composition(
        &self,
        info: &ConstraintInfo,
        alpha: Ext3,
        polys: &[&[Felt]],
        public_inputs: &[Felt],
        geometry: &Geometry,
    ) -> Vec<Ext3>;
    /// Whether `claims` satisfy its constraints at the point of `at` (whose weights the
    /// tables at that point share), combined with α's powers.
    fn ood_holds(
        &self,
        info: &ConstraintInfo,
        alpha: Ext3,
        claims: &OodValues,
        public_inputs: &[Felt],
        at: &LagrangeAt,
    ) -> bool;
    /// Its trace checked row by row, naming the first failure.
    ///
    /// # Errors
    /// The first row and constraint that fail.
    fn check(&self, trace: &RowBlocks, public_inputs: &[Felt]) -> Result<(), AirError>;
}

impl<A: Air> TableAir for A {
    fn public_input_count(&self) -> usize {
        self.num_public_inputs()
    }
    fn info(&self) -> Result<ConstraintInfo, ParamsError> {
        Ok(ConstraintInfo::of(self)?)
    }
    fn key(&self, info: &ConstraintInfo) -> Digest {
        air_key(self, info)
    }
    fn geometry(
        &self,
        info: &ConstraintInfo,
        params: &StarkParams,
    ) -> Result<Geometry, ParamsError> {
        segment_geometry(self, info, params)
    }
    fn composition(
        &self,
        info: &ConstraintInfo,
        alpha: Ext3,
        polys: &[&[Felt]],
        public_inputs: &[Felt],
        g: &Geometry,
    ) -> Vec<Ext3> {
        let log_chunks = g.log_quotient_chunks;
        let periodic = PeriodicPolys::new(&known_columns(self, public_inputs), g.log_rows)
            .on_quotient_coset(log_chunks);
        let composition = Composition::new(info, alpha);
        let plan = LdePlan::new(g.log_rows, log_chunks);
        from_cosets(log_chunks, |v| {
            let trace = plan.coset(polys, v);
            composition.evaluate_coset(self, &trace, public_inputs, &periodic, &plan, v)
        })
    }
    fn ood_holds(
        &self,
        info: &ConstraintInfo,
        alpha: Ext3,
        claims: &OodValues,
        public_inputs: &[Felt],
        at: &LagrangeAt,
    ) -> bool {
        let composition = Composition::new(info, alpha);
        let periodic = PeriodicAt::of(self, at).with_public(self, public_inputs);
        ood_identity_holds(
            self,
            info,
            &composition,
            claims,
            &periodic,
            public_inputs,
            at.z(),
        )
    }
    fn check(&self, trace: &RowBlocks, public_inputs: &[Felt]) -> Result<(), AirError> {
        check_trace(self, trace, public_inputs)
    }
}

/// One table of a [`TablesProof`]: its AIR and the values its constraints read as public
/// inputs.
#[derive(Clone, Copy)]
pub struct TableStatement<'a> {
    /// The table's AIR (its height is the AIR's).
    pub air: &'a dyn TableAir,
    /// Its public inputs.
    pub public_inputs: &'a [Felt],
    /// Whether its public inputs are derived: a function, fixed by the verifier, of the
    /// underived tables' public inputs and of what the verifier holds besides the proof
    /// (bound by the transcript, or checked against what it absorbed), which the verifier
    /// computes rather than reads. The transcript absorbs every table's key but only the
    /// underived tables' public inputs: binding those binds these (`docs/protocol.md` §6
    /// item 19). A verifier must not take a derived table's inputs from the prover.
    pub derived: bool,
}

impl<'a> TableStatement<'a> {
    /// A table whose public inputs the transcript absorbs.
    pub fn new(air: &'a dyn TableAir, public_inputs: &'a [Felt]) -> Self {
        Self {
            air,
            public_inputs,
            derived: false,
        }
    }
}

/// A proof that every table satisfies its AIR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablesProof {
    /// Root of the trace tables' mixed tree.
    pub trace_root: Digest,
    /// Root of the quotient tables' mixed tree.
    pub quotient_root: Digest,
    /// Each table's out-of-domain claims, tallest first.
    pub ood: Vec<OodValues>,
    /// FRI's layer roots.
    pub fri_roots: Vec<Digest>,
    /// FRI's final polynomial.
    pub final_poly: Vec<Ext3>,
    /// The proof-of-work nonce.
    pub pow_nonce: u64,
    /// The openings at the query positions in the tallest table's LDE: at each position,
    /// each table's trace and quotient rows at p mod its LDE size, tallest table first.
    pub queries: QueryOpenings,
}

/// Why a [`TablesProof`] was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TablesError {
    /// This error occurs when a table's parameters are invalid for its AIR.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// This error occurs when the parameters fall short of the verifier's policy.
    #[error(transparent)]
    Policy(#[from] VerifierError),
    /// This error occurs when a part of the proof does not have the size the tables fix.
    #[error("malformed tables proof: {what}: expected {expected}, got {got}")]
    Shape {
        /// Which part.
        what: &'static str,
        /// The size the tables and parameters fix.
        expected: usize,
        /// The size found.
        got: usize,
    },
    /// This error occurs when a table's out-of-domain claims do not satisfy its constraints.
    #[error("table {table}: the out-of-domain claims do not satisfy the constraints")]
    OodMismatch {
        /// The table, counted tallest first.
        table: usize,
    },
    /// This error occurs when the proof-of-work nonce does not have enough leading zeros.
    #[error("the proof-of-work nonce is invalid")]
    ProofOfWork,
    /// This error occurs when the positions are not the transcript's.
    #[error("the query positions are not the ones the transcript draws")]
    QueryPositions,
    /// This error occurs when the rows opened do not lead to a tree's root.
    #[error("the {commitment} rows opened do not match the {commitment} root")]
    Opening {
        /// `trace` or `quotient`.
        commitment: &'static str,
    },
    /// This error occurs when FRI refuses.
    #[error("fri: {0}")]
    Fri(#[from] FriError),
}

/// What prover and verifier derive from the tables and parameters alone.
pub(crate) struct Shapes {
    infos: Vec<ConstraintInfo>,
    pub geometries: Vec<Geometry>,
}

impl Shapes {
    /// The tables' constraints and shapes with `params`.
    ///
    /// # Errors
    /// Tables out of order, another number of public inputs than an AIR reads, or
    /// parameters an AIR cannot be proven with.
    pub fn of(tables: &[TableStatement<'_>], params: &StarkParams) -> Result<Self, TablesError> {
        let mut infos: Vec<ConstraintInfo> = Vec::with_capacity(tables.len());
        let mut geometries = Vec::with_capacity(tables.len());
        for (k, table) in tables.iter().enumerate() {
            // Tables of one AIR instance (a node's alike children's) share its info.
            let same = |other: &TableStatement<'_>| std::ptr::eq(other.air, table.air);
            let info = match tables[..k].iter().position(same) {
                Some(j) => infos[j].clone(),
                None => table.air.info()?,
            };
            geometries.push(table.air.geometry(&info, params)?);
            if table.public_inputs.len() != table.air.public_input_count() {
                return Err(TablesError::Shape {
                    what: "public inputs",
                    expected: table.air.public_input_count(),
                    got: table.public_inputs.len(),
                });
            }
            infos.push(info);
        }
        if geometries.is_empty() || geometries.windows(2).any(|w| w[0].log_rows < w[1].log_rows) {
            return Err(ParamsError::TablesOrder.into());
        }
        Ok(Self { infos, geometries })
    }

    /// The tables' security circuit: what the policy judges.
    fn circuit(&self, params: &StarkParams) -> TablesCircuit {
        let tables = self.infos.iter().zip(&self.geometries);
        TablesCircuit {
            tables: tables
                .map(|(i, g)| Circuit::of_shape(i, g, params))
                .collect(),
        }
    }

    /// The tables sharing each FRI input: runs of one height, tallest first.
    fn groups(&self) -> Vec<Range<usize>> {
        let mut groups: Vec<Range<usize>> = Vec::new();
        for (k, g) in self.geometries.iter().enumerate() {
            match groups.last_mut() {
                Some(last) if self.geometries[last.start].log_rows == g.log_rows => {
                    last.end = k + 1;
                }
                _ => groups.push(k..k + 1),
            }
        }
        groups
    }

    /// Each FRI input's size: one a height.
    fn log_ldes(&self) -> Vec<usize> {
        let heights = self.groups().into_iter();
        heights
            .map(|g| self.geometries[g.start].log_lde())
            .collect()
    }

    /// Each height's DEEP coefficients ([`height_deep_coefficients`]), from every table's
    /// claims (as many as tables).
    fn deep_coefficients(&self, ood: &[OodValues], z: Ext3, gamma: Ext3) -> Vec<DeepCoefficients> {
        let heights = (self.groups().into_iter())
            .map(|group| (&ood[group.clone()], self.geometries[group.start].log_rows));
        height_deep_coefficients(heights, z, gamma)
    }

    /// The shapes of the trace's and the quotient's trees.
    fn trees(&self) -> [MixedShape; 2] {
        let mixed = |width: fn(&Geometry) -> usize| {
            let tables = self.geometries.iter().map(|g| TableShape {
                log_height: g.log_lde(),
                width: width(g),
            });
            MixedShape::new(tables.collect()).expect("tallest first")
        };
        [mixed(|g| g.width), mixed(Geometry::quotient_width)]
    }

    fn arities(&self, params: &StarkParams) -> Vec<usize> {
        fri_arities(self.geometries.iter().map(|g| g.log_rows), params)
    }
}

/// log2 of the FRI rounds' arities for tables of 2^`log_rows` rows each (tallest first)
/// proven with `params`: rounds that stop at every table's LDE size
/// (`ballast_fri::roll_in_arities`).
pub(crate) fn fri_arities(
    log_rows: impl Iterator<Item = usize>,
    params: &StarkParams,
) -> Vec<usize> {
    let mut log_ldes: Vec<usize> = log_rows.map(|l| l + params.log_blowup).collect();
    log_ldes.dedup();
    roll_in_arities(&log_ldes, params.log_blowup + params.log_final_poly_len)
}

/// The transcript bound to the tables and parameters.
fn bind(
    context: &[u8],
    tables: &[TableStatement<'_>],
    shapes: &Shapes,
    params: &StarkParams,
) -> ballast_transcript::Transcript {
    let keys = tables.iter().zip(&shapes.infos).map(|(t, i)| t.air.key(i));
    bind_keyed(Run::Proof, context, tables, keys, params)
}

/// The transcript for `run` bound to the tables, with `keys` for their AIRs' keys, and
/// parameters.
fn bind_keyed(
    run: Run,
    context: &[u8],
    tables: &[TableStatement<'_>],
    keys: impl Iterator<Item = Digest>,
    params: &StarkParams,
) -> ballast_transcript::Transcript {
    let bound: Vec<(Digest, Option<&[Felt]>)> = (tables.iter().zip(keys))
        .map(|(t, key)| (key, (!t.derived).then_some(t.public_inputs)))
        .collect();
    bind_tables(run, context, &bound, params)
}

/// The data a Poseidon2 tables proof's transcript absorbs before the trace's root, from
/// `context`, `tables`, their AIRs' `keys` (each table's [`TableAir::key`], or that of an
/// AIR of the same definition) and `params` alone (the version, the kind, the statement, every
/// parameter, each table's key and each underived table's public inputs): what a recursive
/// verifier holds a child layer's transcript to, as `statement_data` a segment's.
///
/// # Errors
/// Tables out of order, another number of public inputs than an AIR reads or of keys than
/// tables, or parameters an AIR cannot be proven with.
pub fn tables_statement_data(
    context: &[u8],
    tables: &[TableStatement<'_>],
    keys: &[Digest],
    params: &StarkParams,
) -> Result<Vec<Felt>, TablesError> {
    let params = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..*params
    };
    Shapes::of(tables, &params)?;
    expect("AIR keys", tables.len(), keys.len())?;
    // A Poseidon2 transcript always has its data.
    Ok(
        bind_keyed(Run::Shape, context, tables, keys.iter().copied(), &params)
            .data()
            .unwrap_or_default(),
    )
}

/// The shapes of the trace's and the quotient's trees of any proof of `tables` made with
/// `params`: what a layer verifying such a proof opens, from the tables alone.
///
/// # Errors
/// Tables out of order, another number of public inputs than an AIR reads, or parameters
/// an AIR cannot be proven with.
pub fn tables_trees(
    tables: &[TableStatement<'_>],
    params: &StarkParams,
) -> Result<[MixedShape; 2], TablesError> {
    Ok(Shapes::of(tables, params)?.trees())
}

/// How many of a tables proof's lowest tree levels are not kept: an opening rebuilds the 2^6
/// leaves under its node from the polynomials (`LdePlan::strided`), for about the cost of a
/// row. Fewer where a shorter table joins lower, or a coset has fewer rows.
const MAX_PRUNED: usize = 6;

/// The most values a tables proof's commitment extends at once: 2^26 (512 MiB). A coset of
/// all the tables' extensions holds as many values as their traces; where that is more,
/// the extension is built in parts of a coset, 2^s times smaller for the least s that fits
/// ([`LdePlan::coset_part`]).
const MAX_PART_VALUES: usize = 1 << 26;

/// The mixed tree, with `params`' hash, of the tables' extensions by their plans, each table
/// given by its columns' polynomials (raw form, [`LdePlan::raw_columns`]), built a coset at
/// a time, or a part of one where a coset holds more than `max_part` values, and kept from
/// depth [`MAX_PRUNED`] up (or the lowest join's, or a coset's height, where lower).
fn commit_extensions(
    params: &StarkParams,
    plans: &[LdePlan],
    polys: &[Vec<&[Felt]>],
    max_part: usize,
) -> MixedTree {
    let log_lde = |plan: &LdePlan| plan.log_n() + plan.log_blowup();
    let joins = plans
        .iter()
        .map(|plan| log_lde(&plans[0]) - log_lde(plan))
        .filter(|&depth| depth > 0);
    let pruned = joins.fold(MAX_PRUNED.min(plans[0].log_n()), usize::min);
    // Each part keeps the levels pruned and a row of the shortest table.
    let shortest = plans.iter().map(LdePlan::log_n).min().unwrap_or_default();
    let most = (plans[0].log_n() - pruned).min(shortest);
    let values: usize = (plans.iter().zip(polys))
        .map(|(plan, columns)| columns.len() << plan.log_n())
        .sum();
    let log_split = (0..most).find(|&s| values >> s <= max_part).unwrap_or(most);
    let log_parts = plans[0].log_blowup() + log_split;
    MixedTree::commit_cosets(params.hash, log_parts, pruned, |v| {
        plans
            .iter()
            .zip(polys)
            .map(|(plan, columns)| plan.coset_part(columns, v, log_split))
            .collect()
    })
    .expect("extensions tallest first, none joining below the levels kept")
}

/// The batch opening of `positions` in `tree`, the mixed tree of the extensions of `polys`
/// ([`commit_extensions`]): the leaves it does not keep rebuilt from the tallest tables'
/// polynomials.
fn open_extensions(
    params: &StarkParams,
    tree: &MixedTree,
    plans: &[LdePlan],
    polys: &[Vec<&[Felt]>],
    positions: &[usize],
) -> Vec<Digest> {
    let (height, pruned) = (tree.shape().height(), tree.pruned());
    let tallest: Vec<usize> = (0..polys.len())
        .filter(|&t| tree.shape().tables()[t].log_height == height)
        .collect();
    tree.open_batch(positions, |block| {
        // Leaf block·2^p + i holds position br(i)·2^(height − p) + br(block).
        let first = bit_reverse(block, height - pruned);
        let rows: Vec<RowBlocks> = tallest
            .iter()
            .map(|&t| plans[t].strided(&polys[t], first, pruned))
            .collect();
        (0..1usize << pruned)
            .map(|i| {
                let j = bit_reverse(i, pruned);
                let leaf: Vec<Felt> = rows.iter().flat_map(|r| r.row(j)).collect();
                params.hash.row(&leaf)
            })
            .collect()
    })
}

/// Proves that each of `traces` satisfies its table's AIR, the tables given tallest
/// first, all with `params`, for the statement `context`. Each trace gives way to its
/// polynomials (one allocation a table), and no extension is held whole: the composition
/// and the DEEP functions read them a coset at a time, the trees a coset or a part of one
/// (`MAX_PART_VALUES`) and keep their upper levels only, and what a query opens is
/// evaluated from the polynomials, so the prover keeps the polynomials, those levels and
/// FRI's layers (`docs/recursion.md`).
///
/// # Errors
/// Tables out of order, parameters a table's AIR cannot be proven with, a trace of the wrong
/// shape, or a trace that does not satisfy its AIR (named by table, row and constraint).
pub fn prove_tables(
    context: &[u8],
    tables: &[TableStatement<'_>],
    traces: Vec<RowBlocks>,
    params: &StarkParams,
) -> Result<TablesProof, ProverError> {
    let shapes = Shapes::of(tables, params)?;
    expect("traces", tables.len(), traces.len())?;
    for (g, trace) in shapes.geometries.iter().zip(traces.iter()) {
        if trace.width() != g.width || trace.height() != 1 << g.log_rows {
            return Err(AirError::Shape {
                width: g.width,
                height: 1 << g.log_rows,
                got_width: trace.width(),
                got_height: trace.height(),
            }
            .into());
        }
    }
    let mut transcript = bind(context, tables, &shapes, params);
    let plans: Vec<LdePlan> = shapes
        .geometries
        .iter()
        .map(|g| LdePlan::new(g.log_rows, g.log_blowup))
        .collect();

    // 1 ----- every trace's polynomials, committed a coset of their extension (or a part of
    // one) at a time; α
    let trace_raw: Vec<ColumnMajor> = plans
        .iter()
        .zip(traces)
        .map(|(plan, trace)| plan.raw_columns(&trace))
        .collect();
    let trace_polys: Vec<Vec<&[Felt]>> = trace_raw.iter().map(|t| t.columns().collect()).collect();
    let trace_tree = commit_extensions(params, &plans, &trace_polys, MAX_PART_VALUES);
    let alpha = draw_alpha(&mut transcript, &trace_tree.root());

    // 2 ----- each table's quotient, from its trace on the quotient's domain a coset at a
    // time, committed like the traces; z
    let mut quotient_raw = Vec::with_capacity(tables.len());
    for (k, table) in tables.iter().enumerate() {
        let (info, g) = (&shapes.infos[k], &shapes.geometries[k]);
        let evals = table
            .air
            .composition(info, alpha, &trace_polys[k], table.public_inputs, g);
        quotient_raw.push(quotient_columns(&evals, g.log_rows, g.log_quotient_chunks));
    }
    let quotient_polys: Vec<Vec<&[Felt]>> = (quotient_raw.iter())
        .map(|t| t.iter().map(Vec::as_slice).collect())
        .collect();
    let quotient_tree = commit_extensions(params, &plans, &quotient_polys, MAX_PART_VALUES);
    let tallest = &shapes.geometries[0];
    let z = draw_ood_point(
        &mut transcript,
        &quotient_tree.root(),
        tallest.log_rows,
        tallest.log_blowup,
    );

    // 3 ----- every table's out-of-domain claims, checked; γ
    let mut ood = Vec::with_capacity(tables.len());
    let at = LagrangeAt::new(z);
    for (k, table) in tables.iter().enumerate() {
        let omega = Ext3::from(Felt::two_adic_root(shapes.geometries[k].log_rows));
        let claims = OodValues {
            trace_z: raw_at(&trace_polys[k], z),
            trace_zw: raw_at(&trace_polys[k], z * omega),
            quotient_z: raw_at(&quotient_polys[k], z),
        };
        let info = &shapes.infos[k];
        if !table
            .air
            .ood_holds(info, alpha, &claims, table.public_inputs, &at)
        {
            let trace = plans[k].evaluations(&trace_polys[k]);
            table.air.check(&trace, table.public_inputs)?;
            return Err(ProverError::OodIdentity);
        }
        ood.push(claims);
    }
    let gamma = draw_gamma(&mut transcript, &ood);

    // 4 ----- each height's DEEP function, its tables' columns concatenated, extended a
    // coset at a time; 5 ----- one FRI rolling the shorter ones in
    let deeps = shapes.deep_coefficients(&ood, z, gamma);
    let inputs: Vec<Vec<Ext3>> = (shapes.groups().into_iter().zip(&deeps))
        .map(|(group, deep)| {
            let (trace, quotient) = (
                joined_columns(&trace_polys[group.clone()]),
                joined_columns(&quotient_polys[group.clone()]),
            );
            DeepSum::new(deep, &trace, &quotient).extend(&plans[group.start])
        })
        .collect();
    let mut layers = HostLayers::new(inputs, params.hash);
    let FriCommitment {
        layer_roots,
        final_poly,
    } = commit_phase::<_, FriError>(
        &mut layers,
        &shapes.log_ldes(),
        params.log_blowup,
        params.log_final_poly_len,
        &mut transcript,
    )?;

    // 6 ----- proof of work
    let pow_nonce = transcript.grind(params.pow_bits);
    absorb_pow_nonce(&mut transcript, pow_nonce);

    // 7 ----- queries: each table's rows at p mod its size, FRI's layers
    let log_lde = tallest.log_lde();
    let positions = distinct(&query_draws(&mut transcript, params.num_queries, log_lde));
    let plans = &plans;
    let rows = |polys: &[Vec<&[Felt]>], tree: &MixedTree| -> Vec<Felt> {
        positions
            .iter()
            .flat_map(|&p| {
                polys
                    .iter()
                    .enumerate()
                    .flat_map(move |(t, columns)| plans[t].row(columns, tree.shape().row_of(t, p)))
            })
            .collect()
    };
    let plan = QueryPlan::new(log_lde, &shapes.arities(params), &positions)?;
    Ok(TablesProof {
        trace_root: trace_tree.root(),
        quotient_root: quotient_tree.root(),
        ood,
        fri_roots: layer_roots,
        final_poly,
        pow_nonce,
        queries: QueryOpenings {
            trace_rows: rows(&trace_polys, &trace_tree),
            trace_nodes: open_extensions(params, &trace_tree, plans, &trace_polys, &positions),
            quotient_rows: rows(&quotient_polys, &quotient_tree),
            quotient_nodes: open_extensions(
                params,
                &quotient_tree,
                plans,
                &quotient_polys,
                &positions,
            ),
            fri: layers.open(&plan),
            positions,
        },
    })
}

/// The columns of `tables`, one table's after another.
fn joined_columns<'a>(tables: &[Vec<&'a [Felt]>]) -> Vec<&'a [Felt]> {
    tables.iter().flatten().copied().collect()
}

/// Checks that `proof` shows each table's trace exists and satisfies its AIR with its public
/// inputs, for the statement `context`, with `params`, which must satisfy `policy` (its
/// floor judged on the tables' figure, [`TablesCircuit`](crate::TablesCircuit)). Returns
/// that circuit. A derived table's inputs must be the verifier's own, built from what it
/// holds ([`TableStatement::derived`]), never read from the prover.
///
/// # Errors
/// Parameters the policy refuses, or the first check that fails.
pub fn verify_tables(
    context: &[u8],
    tables: &[TableStatement<'_>],
    proof: &TablesProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, TablesError> {
    replay_tables(context, tables, proof, params, policy).map(|replay| replay.circuit)
}

/// What [`verify_tables`] derives on the way: what a layer verifying a tables proof
/// recomputes.
#[derive(Clone, Debug)]
pub struct TablesReplay {
    /// The tables' circuit, which the policy judged.
    pub circuit: TablesCircuit,
    /// The shapes of the trace's and the quotient's trees.
    pub trees: [MixedShape; 2],
    /// α, the constraints' combination challenge.
    pub alpha: Ext3,
    /// z, the out-of-domain point.
    pub z: Ext3,
    /// γ, the DEEP functions' challenge.
    pub gamma: Ext3,
    /// Each height's DEEP coefficients, tallest first: its tables' columns, concatenated.
    pub deeps: Vec<DeepCoefficients>,
    /// The query positions in the tallest LDE (distinct and increasing).
    pub positions: Vec<usize>,
    /// The same positions as drawn: in the transcript's order, a repeated one repeated.
    pub draws: Vec<usize>,
    /// Each FRI round's folding challenge β.
    pub betas: Vec<Ext3>,
    /// Each FRI layer's opened rows (`ballast_fri::verify_queries`'s).
    pub fri_rows: Vec<Vec<Felt>>,
    /// Its transcript's permutations and messages ([`tables_transcript`]'s; `None` for
    /// Keccak-256).
    pub transcript: Option<TranscriptLayout>,
}

/// [`verify_tables`], returning what the verifier derived on the way.
///
/// # Errors
/// As [`verify_tables`].
pub fn replay_tables(
    context: &[u8],
    tables: &[TableStatement<'_>],
    proof: &TablesProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesReplay, TablesError> {
    let shapes = Shapes::of(tables, params)?;
    let circuit = shapes.circuit(params);
    policy.check_tables(&circuit)?;
    let count = tables.len();
    check_claims(&shapes, proof)?;
    let (
        transcript,
        Challenges {
            alpha,
            z,
            gamma,
            fri,
            work_done,
            draws,
        },
    ) = run_transcript(
        bind(context, tables, &shapes, params),
        &shapes,
        params,
        proof,
    )?;

    // Every table's claims against its constraints, the work, the positions
    let at = LagrangeAt::new(z);
    for (k, table) in tables.iter().enumerate() {
        let (info, claims) = (&shapes.infos[k], &proof.ood[k]);
        if !table
            .air
            .ood_holds(info, alpha, claims, table.public_inputs, &at)
        {
            return Err(TablesError::OodMismatch { table: k });
        }
    }
    let deeps = shapes.deep_coefficients(&proof.ood, z, gamma);
    if !work_done {
        return Err(TablesError::ProofOfWork);
    }
    let positions = distinct(&draws);
    if positions != proof.queries.positions {
        return Err(TablesError::QueryPositions);
    }

    // 7 ----- the rows against the roots, each table's DEEP value where the queries reach it
    let [trace, quotient] = shapes.trees();
    let trace_rows = split_rows(
        &proof.queries.trace_rows,
        &trace,
        positions.len(),
        "trace rows",
    )?;
    let quotient_rows = split_rows(
        &proof.queries.quotient_rows,
        &quotient,
        positions.len(),
        "quotient rows",
    )?;
    let opened = |shape, root, rows: &[&[Felt]], nodes, commitment| {
        if verify_mixed(params.hash, root, shape, &positions, rows, nodes) {
            Ok(())
        } else {
            Err(TablesError::Opening { commitment })
        }
    };
    opened(
        &trace,
        &proof.trace_root,
        &trace_rows,
        &proof.queries.trace_nodes,
        "trace",
    )?;
    opened(
        &quotient,
        &proof.quotient_root,
        &quotient_rows,
        &proof.queries.quotient_nodes,
        "quotient",
    )?;
    let values: Vec<Vec<Ext3>> = (shapes.groups().into_iter().zip(&deeps))
        .map(|(group, deep)| {
            let log_lde = shapes.geometries[group.start].log_lde();
            let zeta = Felt::two_adic_root(log_lde);
            let mut reached: Vec<(usize, usize)> = positions
                .iter()
                .enumerate()
                .map(|(q, &p)| (trace.row_of(group.start, p), q))
                .collect();
            reached.sort_unstable();
            reached.dedup_by_key(|(y, _)| *y);
            let joined = |rows: &[&[Felt]], q: usize| rows[q * count..][group.clone()].concat();
            reached
                .into_iter()
                .map(|(y, q)| {
                    let x = LdePlan::SHIFT * zeta.pow(y as u64);
                    deep.evaluate(&joined(&trace_rows, q), &joined(&quotient_rows, q), x)
                })
                .collect()
        })
        .collect();
    let fri_rows = verify_queries(
        &fri,
        &positions,
        &values[0],
        &values[1..],
        &proof.queries.fri,
    )?;
    Ok(TablesReplay {
        circuit,
        trees: [trace, quotient],
        alpha,
        z,
        gamma,
        deeps,
        positions,
        draws,
        betas: fri.betas().to_vec(),
        fri_rows,
        transcript: TranscriptLayout::of(&transcript),
    })
}

/// Refuses claims of other counts than the tables' shapes fix.
fn check_claims(shapes: &Shapes, proof: &TablesProof) -> Result<(), TablesError> {
    expect("tables' claims", shapes.geometries.len(), proof.ood.len())?;
    for (claims, g) in proof.ood.iter().zip(&shapes.geometries) {
        expect("trace values at z", g.width, claims.trace_z.len())?;
        expect("trace values at zω", g.width, claims.trace_zw.len())?;
        expect(
            "quotient values at z",
            g.quotient_width(),
            claims.quotient_z.len(),
        )?;
    }
    Ok(())
}

/// `proof`'s transcript, run as its verifier runs it (steps 1–7) from `transcript`, bound to
/// the statement: the roots, every table's claims, FRI's commitments and the nonce absorbed
/// in order, and what it draws between them. Nothing is judged here.
///
/// # Errors
/// FRI roots or a final polynomial of other counts than the tables fix.
fn run_transcript(
    mut transcript: ballast_transcript::Transcript,
    shapes: &Shapes,
    params: &StarkParams,
    proof: &TablesProof,
) -> Result<(ballast_transcript::Transcript, Challenges), TablesError> {
    let tallest = &shapes.geometries[0];
    let alpha = draw_alpha(&mut transcript, &proof.trace_root);
    let z = draw_ood_point(
        &mut transcript,
        &proof.quotient_root,
        tallest.log_rows,
        tallest.log_blowup,
    );
    let gamma = draw_gamma(&mut transcript, &proof.ood);
    let fri = FriVerifierInput::new(
        &shapes.log_ldes(),
        params.log_blowup,
        params.log_final_poly_len,
        proof.fri_roots.clone(),
        proof.final_poly.clone(),
        &mut transcript,
    )?;
    let (work_done, draws) = work_and_draws(
        &mut transcript,
        params.pow_bits,
        proof.pow_nonce,
        params.num_queries,
        tallest.log_lde(),
    );
    let drawn = Challenges {
        alpha,
        z,
        gamma,
        fri,
        work_done,
        draws,
    };
    Ok((transcript, drawn))
}

/// The permutations and messages of `proof`'s Poseidon2 transcript, as its verifier runs it
/// for `tables` and the statement `context` with `params` (`None` for Keccak-256): what a
/// layer verifying this proof recomputes. Its challenges are read in the order a segment's
/// are: α, z, γ, each FRI round's β, then the query draws.
///
/// # Errors
/// Tables or parameters that make no shape, or claims, roots or a final polynomial of other
/// counts than they fix.
pub fn tables_transcript(
    context: &[u8],
    tables: &[TableStatement<'_>],
    proof: &TablesProof,
    params: &StarkParams,
) -> Result<Option<TranscriptLayout>, TablesError> {
    let shapes = Shapes::of(tables, params)?;
    check_claims(&shapes, proof)?;
    let bound = bind(context, tables, &shapes, params);
    let (transcript, _) = run_transcript(bound, &shapes, params, proof)?;
    Ok(TranscriptLayout::of(&transcript))
}

/// The permutations and messages of the Poseidon2 transcript of any proof of `tables` for
/// the statement `context` made with `params` (`None` for Keccak-256): what the tables and
/// the protocol's order fix, each absorbed value taken as zero (the AIRs' keys too, so none
/// is computed). A proof's own ([`tables_transcript`]) differ from these in their data and
/// what they read only.
///
/// # Errors
/// Tables or parameters that make no shape.
pub fn tables_transcript_layout(
    context: &[u8],
    tables: &[TableStatement<'_>],
    params: &StarkParams,
) -> Result<Option<TranscriptLayout>, TablesError> {
    let shapes = Shapes::of(tables, params)?;
    let zeros = |n| vec![Ext3::ZERO; n];
    let proof = TablesProof {
        trace_root: Digest::default(),
        quotient_root: Digest::default(),
        ood: (shapes.geometries.iter())
            .map(|g| OodValues {
                trace_z: zeros(g.width),
                trace_zw: zeros(g.width),
                quotient_z: zeros(g.quotient_width()),
            })
            .collect(),
        fri_roots: vec![Digest::default(); shapes.arities(params).len()],
        final_poly: zeros(1 << params.log_final_poly_len),
        pow_nonce: 0,
        queries: QueryOpenings::default(),
    };
    let keys = std::iter::repeat(Digest::default());
    let bound = bind_keyed(Run::Shape, context, tables, keys, params);
    let (transcript, _) = run_transcript(bound, &shapes, params, &proof)?;
    Ok(TranscriptLayout::of(&transcript))
}

/// `rows`, the rows of each table at each position, cut into one slice a (position, table).
fn split_rows<'r>(
    rows: &'r [Felt],
    shape: &MixedShape,
    positions: usize,
    what: &'static str,
) -> Result<Vec<&'r [Felt]>, TablesError> {
    shape
        .split_rows(rows, positions)
        .ok_or_else(|| TablesError::Shape {
            what,
            expected: positions * shape.tables().iter().map(|t| t.width).sum::<usize>(),
            got: rows.len(),
        })
}

/// `expected` == `got`, or [`TablesError::Shape`] naming `what`.
pub(crate) fn expect(what: &'static str, expected: usize, got: usize) -> Result<(), TablesError> {
    if expected == got {
        Ok(())
    } else {
        Err(TablesError::Shape {
            what,
            expected,
            got,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::MerkleHash;
    use crate::test_air::{CounterAir, counter_trace};

    pub(crate) const CONTEXT: &[u8] = b"tables-test";

    /// A policy the test parameters meet: no floor.
    pub(crate) fn lenient() -> VerifyPolicy {
        VerifyPolicy {
            min_security_bits: 0,
            ..VerifyPolicy::default()
        }
    }

    pub(crate) fn params(hash: MerkleHash) -> StarkParams {
        StarkParams {
            log_blowup: 1,
            num_queries: 12,
            pow_bits: 2,
            log_final_poly_len: 1,
            hash,
        }
    }

    /// Counters of 2^7, 2^5 (two, sharing a height) and 2^2 rows from different starts:
    /// LDEs of 2^8, 2^6 and 2^3.
    pub(crate) fn airs() -> Vec<CounterAir> {
        [7, 5, 5, 2].map(|log_rows| CounterAir { log_rows }).into()
    }

    fn traces(airs: &[CounterAir]) -> (Vec<RowBlocks>, Vec<Vec<Felt>>) {
        airs.iter()
            .enumerate()
            .map(|(k, air)| counter_trace(air.log_rows, 3 + 10 * k as u64))
            .unzip()
    }

    pub(crate) fn statements<'a>(
        airs: &'a [CounterAir],
        public: &'a [Vec<Felt>],
    ) -> Vec<TableStatement<'a>> {
        airs.iter()
            .zip(public)
            .map(|(air, p)| TableStatement::new(air, p))
            .collect()
    }

    pub(crate) fn proven(hash: MerkleHash) -> (Vec<CounterAir>, Vec<Vec<Felt>>, TablesProof) {
        let airs = airs();
        let (traces, public) = traces(&airs);
        let proof = prove_tables(CONTEXT, &statements(&airs, &public), traces, &params(hash))
            .expect("true tables");
        (airs, public, proof)
    }

    #[test]
    fn extensions_committed_in_parts_make_the_cosets_tree() {
        // Parts of a quarter coset (the most the shortest table allows) against whole ones.
        let airs = airs();
        let (traces, _) = traces(&airs);
        let plans: Vec<LdePlan> = airs.iter().map(|a| LdePlan::new(a.log_rows, 1)).collect();
        let raw: Vec<ColumnMajor> = (plans.iter().zip(&traces))
            .map(|(plan, trace)| plan.raw_columns(trace))
            .collect();
        let polys: Vec<Vec<&[Felt]>> = raw.iter().map(|t| t.columns().collect()).collect();
        for hash in MerkleHash::ALL {
            let whole = commit_extensions(&params(hash), &plans, &polys, usize::MAX);
            let parts = commit_extensions(&params(hash), &plans, &polys, 1);
            assert_eq!(parts.levels(), whole.levels(), "{hash:?}");
            assert_eq!(parts.root(), whole.root());
        }
    }

    #[test]
    fn tables_of_three_heights_prove_and_verify() {
        for hash in MerkleHash::ALL {
            let (airs, public, proof) = proven(hash);
            let tables = statements(&airs, &public);
            verify_tables(CONTEXT, &tables, &proof, &params(hash), &lenient()).unwrap();
            // Rounds of 4, 8 and 2: they stop at 2^6 and 2^3, where the shorter tables roll
            // in, and end at the final domain, 2^2.
            assert_eq!(proof.fri_roots.len(), 3);
            assert!(verify_tables(b"other", &tables, &proof, &params(hash), &lenient()).is_err());
        }
    }

    #[test]
    fn one_table_and_a_table_as_short_as_the_final_domain_prove_and_verify() {
        let hash = MerkleHash::Keccak256;
        // 2^1 rows at blowup 2: an LDE of 2^2, the final domain itself. Two tallest tables
        // share a leaf, which an opening rebuilds below the levels the tree keeps.
        for shape in [vec![6], vec![6, 1], vec![4, 3, 1], vec![5, 5, 2]] {
            let airs: Vec<CounterAir> = shape
                .iter()
                .map(|&log_rows| CounterAir { log_rows })
                .collect();
            let (traces, public) = traces(&airs);
            let tables = statements(&airs, &public);
            let proof = prove_tables(CONTEXT, &tables, traces, &params(hash)).unwrap();
            verify_tables(CONTEXT, &tables, &proof, &params(hash), &lenient()).unwrap();
        }
    }

    #[test]
    fn tables_of_one_height_batch_their_concatenated_columns() {
        let airs = airs();
        let (_, public) = traces(&airs);
        let shapes =
            Shapes::of(&statements(&airs, &public), &params(MerkleHash::Keccak256)).unwrap();
        assert_eq!(shapes.groups(), [0..1, 1..3, 3..4]);
        assert_eq!(shapes.log_ldes(), [8, 6, 3]);
        // Claims of the shapes' sizes; a counter has 2 trace columns and 3 quotient
        // coordinates (degree 2: one chunk).
        let claims = |k: u64| {
            let g = &shapes.geometries[k as usize];
            let ext = |i: usize, salt: u64| Ext3::from(Felt::new(salt * 1000 + k * 100 + i as u64));
            OodValues {
                trace_z: (0..g.width).map(|i| ext(i, 1)).collect(),
                trace_zw: (0..g.width).map(|i| ext(i, 2)).collect(),
                quotient_z: (0..g.quotient_width()).map(|i| ext(i, 3)).collect(),
            }
        };
        let ood: Vec<OodValues> = (0..4).map(claims).collect();
        let gamma = Ext3::new([Felt::new(3), Felt::new(5), Felt::new(7)]);
        let z = Ext3::new([Felt::new(11), Felt::new(13), Felt::new(17)]);
        let deeps = shapes.deep_coefficients(&ood, z, gamma);
        assert_eq!(deeps.len(), 3, "one function a height");
        // The 2^5 height: both counters' trace columns at γ⁰..γ³, their quotients' at
        // γ⁴..γ⁹, the next row's weight γ^10, and the claims the two tables' in order.
        let pair = &deeps[1];
        assert_eq!(pair.trace, gamma.powers(4));
        assert_eq!(pair.quotient, gamma.powers(10)[4..]);
        assert_eq!(pair.next_row, gamma.pow(10));
        let a: Ext3 = (ood[1].trace_z.iter().chain(&ood[2].trace_z))
            .chain(ood[1].quotient_z.iter().chain(&ood[2].quotient_z))
            .zip(gamma.powers(10))
            .fold(Ext3::ZERO, |sum, (&v, c)| sum + c * v);
        assert_eq!(pair.at_z, a);
        // A height of one table is that table's function.
        let single =
            crate::deep::deep_coefficients(&ood[0], z, shapes.geometries[0].log_rows, gamma);
        assert_eq!(deeps[0], single);
    }

    #[test]
    fn the_policy_judges_the_tables_figure() {
        let hash = MerkleHash::Keccak256;
        let (airs, public, proof) = proven(hash);
        let tables = statements(&airs, &public);
        let result = verify_tables(
            CONTEXT,
            &tables,
            &proof,
            &params(hash),
            &VerifyPolicy::default(),
        );
        assert!(
            matches!(
                result,
                Err(TablesError::Policy(
                    VerifierError::InsufficientSecurity { .. }
                ))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_derived_tables_inputs_are_read_but_not_absorbed() {
        let params = params(MerkleHash::Poseidon2);
        let airs = airs();
        let (traces, public) = traces(&airs);
        let absorbed = statements(&airs, &public);
        let mut tables = absorbed.clone();
        tables[1].derived = true;
        let shapes = Shapes::of(&tables, &params).unwrap();
        let lists = |tables: &[TableStatement<'_>]| {
            let messages = bind(CONTEXT, tables, &shapes, &params).messages().unwrap();
            let lists = messages
                .iter()
                .filter(|m| m.label == crate::label::PUBLIC_INPUTS);
            lists.count()
        };
        assert_eq!((lists(&absorbed), lists(&tables)), (4, 3));
        let proof = prove_tables(CONTEXT, &tables, traces, &params).unwrap();
        verify_tables(CONTEXT, &tables, &proof, &params, &lenient()).unwrap();
        // Its constraints still read them: others, at the same challenges, are refused.
        let mut other = public.clone();
        other[1][1] += Felt::ONE;
        let mut changed = statements(&airs, &other);
        changed[1].derived = true;
        assert_eq!(
            verify_tables(CONTEXT, &changed, &proof, &params, &lenient()).map(drop),
            Err(TablesError::OodMismatch { table: 1 })
        );
        // A verifier that absorbs them draws other challenges.
        assert!(verify_tables(CONTEXT, &absorbed, &proof, &params, &lenient()).is_err());
    }

    #[test]
    fn a_tables_transcript_is_not_a_segments() {
        let air = CounterAir { log_rows: 3 };
        let (_, public) = counter_trace(3, 1);
        let info = ConstraintInfo::of(&air).unwrap();
        let params = params(MerkleHash::Poseidon2);
        let segment = crate::SegmentStatement {
            context: CONTEXT,
            position: crate::SegmentPosition { index: 0, count: 1 },
            public_inputs: &public,
        };
        let mut one = crate::protocol::bind(Run::Proof, &air_key(&air, &info), &segment, &params);
        let key = air_key(&air, &info);
        let mut tables = bind_tables(Run::Proof, CONTEXT, &[(key, Some(&public[..]))], &params);
        // They part at the second message, the tables' kind where a segment's statement is.
        let labels = |t: &ballast_transcript::Transcript| -> Vec<String> {
            t.messages().unwrap().into_iter().map(|m| m.label).collect()
        };
        assert_eq!(labels(&one)[..2], ["protocol-version", "statement"]);
        assert_eq!(labels(&tables)[..2], ["protocol-version", "proof-kind"]);
        assert_ne!(one.challenge_ext("x"), tables.challenge_ext("x"));
    }

    #[test]
    fn every_tampered_part_is_refused() {
        let hash = MerkleHash::Poseidon2;
        let (airs, public, proof) = proven(hash);
        let tables = statements(&airs, &public);
        let refused = |bad: &TablesProof, what: &str| {
            assert!(
                verify_tables(CONTEXT, &tables, bad, &params(hash), &lenient()).is_err(),
                "{what}"
            );
        };
        let digest = |d: &mut Digest| d[0] ^= 1;
        let mut bad = proof.clone();
        digest(&mut bad.trace_root);
        refused(&bad, "trace root");
        let mut bad = proof.clone();
        digest(&mut bad.quotient_root);
        refused(&bad, "quotient root");
        for k in 0..proof.ood.len() {
            for part in 0..3 {
                let len = [
                    &proof.ood[k].trace_z,
                    &proof.ood[k].trace_zw,
                    &proof.ood[k].quotient_z,
                ][part]
                    .len();
                for i in 0..len {
                    let mut bad = proof.clone();
                    let claims = &mut bad.ood[k];
                    [
                        &mut claims.trace_z,
                        &mut claims.trace_zw,
                        &mut claims.quotient_z,
                    ][part][i] += Ext3::ONE;
                    refused(&bad, &format!("table {k}, claim {part}.{i}"));
                }
            }
        }
        for i in 0..proof.fri_roots.len() {
            let mut bad = proof.clone();
            digest(&mut bad.fri_roots[i]);
            refused(&bad, "fri root");
        }
        for i in 0..proof.final_poly.len() {
            let mut bad = proof.clone();
            bad.final_poly[i] += Ext3::ONE;
            refused(&bad, "final polynomial");
        }
        let mut bad = proof.clone();
        bad.pow_nonce ^= 1;
        refused(&bad, "nonce");
        let mut bad = proof.clone();
        bad.queries.positions[0] ^= 1;
        refused(&bad, "positions");
        for i in 0..proof.queries.trace_rows.len() {
            let mut bad = proof.clone();
            bad.queries.trace_rows[i] += Felt::ONE;
            refused(&bad, &format!("trace row element {i}"));
        }
        for i in 0..proof.queries.quotient_rows.len() {
            let mut bad = proof.clone();
            bad.queries.quotient_rows[i] += Felt::ONE;
            refused(&bad, &format!("quotient row element {i}"));
        }
        for i in 0..proof.queries.trace_nodes.len() {
            let mut bad = proof.clone();
            digest(&mut bad.queries.trace_nodes[i]);
            refused(&bad, "trace node");
        }
        for i in 0..proof.queries.quotient_nodes.len() {
            let mut bad = proof.clone();
            digest(&mut bad.queries.quotient_nodes[i]);
            refused(&bad, "quotient node");
        }
        for layer in 0..proof.queries.fri.len() {
            for i in 0..proof.queries.fri[layer].values.len() {
                let mut bad = proof.clone();
                bad.queries.fri[layer].values[i] += Ext3::ONE;
                refused(&bad, &format!("fri layer {layer} value {i}"));
            }
            for i in 0..proof.queries.fri[layer].nodes.len() {
                let mut bad = proof.clone();
                digest(&mut bad.queries.fri[layer].nodes[i]);
                refused(&bad, &format!("fri layer {layer} node {i}"));
            }
        }
        let mut bad = proof.clone();
        bad.queries.trace_rows.pop();
        refused(&bad, "a short trace row");
        let mut bad = proof.clone();
        bad.ood.pop();
        refused(&bad, "a table's claims missing");
    }

    #[test]
    fn another_statement_is_refused_by_the_table_it_changes() {
        let hash = MerkleHash::Keccak256;
        let (airs, mut public, proof) = proven(hash);
        public[2][1] += Felt::ONE;
        let tables = statements(&airs, &public);
        assert!(verify_tables(CONTEXT, &tables, &proof, &params(hash), &lenient()).is_err());
        // A shorter table of another height: another shape.
        let (mut airs, public, proof) = proven(hash);
        airs[1].log_rows = 4;
        let tables = statements(&airs, &public);
        assert!(verify_tables(CONTEXT, &tables, &proof, &params(hash), &lenient()).is_err());
    }

    #[test]
    fn a_false_table_is_named_and_bad_tables_refused() {
        let hash = MerkleHash::Keccak256;
        let airs = airs();
        let (mut traces, public) = traces(&airs);
        traces[2].set(1, 1, Felt::new(7));
        let result = prove_tables(CONTEXT, &statements(&airs, &public), traces, &params(hash));
        assert!(
            matches!(result, Err(ProverError::Unsatisfied(_))),
            "{result:?}"
        );

        let (traces, public) = self::traces(&airs);
        let swapped = [CounterAir { log_rows: 5 }, CounterAir { log_rows: 7 }];
        let result = prove_tables(
            CONTEXT,
            &statements(&swapped, &public[..2]),
            traces[..2].to_vec(),
            &params(hash),
        );
        assert!(matches!(
            result,
            Err(ProverError::Tables(TablesError::Params(
                ParamsError::TablesOrder
            )))
        ));
        let increasing = [CounterAir { log_rows: 2 }, CounterAir { log_rows: 5 }];
        let tables = statements(&increasing, &public[..2]);
        assert!(matches!(
            verify_tables(CONTEXT, &tables, &proven(hash).2, &params(hash), &lenient()),
            Err(TablesError::Params(ParamsError::TablesOrder))
        ));
        let result = prove_tables(
            CONTEXT,
            &statements(&airs, &public),
            traces[..2].to_vec(),
            &params(hash),
        );
        assert!(matches!(
            result,
            Err(ProverError::Tables(TablesError::Shape { .. }))
        ));
    }
}
