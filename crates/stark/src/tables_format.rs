//! A tables proof's bytes: [`TablesRecord`], the parameters, each table's shape and public
//! inputs, tallest first, and the [`TablesProof`], in the sections of `layout.rs`.
//!
//! As for a proof (`codec.rs`): the header (the parameters, the tables' shapes) fixes every
//! length but the number of distinct query positions, which comes first with the positions;
//! it bounds the whole ([`TablesRecord::max_len`]), the decoder checks each count before it
//! reads what it counts and requires exactly the stated length, and every record has one
//! encoding.

use ballast_field::{Ext3, Felt};
use ballast_fri::{PlannedLayer, QueryPlan};
use ballast_merkle::{MixedShape, TableShape};

use crate::codec::{Decoder, Encoder, Section, check_stated};
use crate::layout::{
    At, Count, HEADER, Head, SHARED_HEADER, TABLE_COUNT, TABLE_SHAPE, TABLES_MAGIC, TableHead,
    header_count, tables_body_sections,
};
use crate::protocol::PROTOCOL_VERSION;
use crate::sizes::empty_layers;
use crate::tables::{Shapes, expect, fri_arities};
use crate::{
    MerkleHash, OodValues, ParamsError, ProofFormatError, QueryOpenings, StarkParams, TableAir,
    TableStatement, TablesError, TablesProof, VerifyPolicy, verify_tables,
};

/// A tables proof with what its verifier reads besides the AIRs and the statement's
/// context: the parameters and each table's shape and public inputs, tallest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablesRecord {
    /// The parameters every table is proven with.
    pub params: StarkParams,
    /// The tables, tallest first.
    pub tables: Vec<RecordedTable>,
    /// The proof.
    pub proof: TablesProof,
}

/// One table of a [`TablesRecord`]: its shape and public inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedTable {
    /// log2 of its rows.
    pub log_rows: usize,
    /// Its columns.
    pub width: usize,
    /// log2 of its quotient's chunks.
    pub log_quotient_chunks: usize,
    /// Its public inputs.
    pub public_inputs: Vec<Felt>,
}

impl TablesRecord {
    /// The record of `proof`, a proof of `tables` with `params`.
    ///
    /// # Errors
    /// Tables out of order, parameters a table's AIR cannot be proven with, or more tables,
    /// columns or public inputs than the format's fields hold.
    pub fn new(
        tables: &[TableStatement<'_>],
        params: &StarkParams,
        proof: TablesProof,
    ) -> Result<Self, TablesError> {
        let shapes = Shapes::of(tables, params)?;
        let within = |what, most: u64, got: usize| {
            if got as u64 > most {
                Err(TablesError::Shape {
                    what,
                    expected: most as usize,
                    got,
                })
            } else {
                Ok(())
            }
        };
        // The fields that state them: the count, a table's width and public input count.
        let [_, width, _, public] = &TABLE_SHAPE;
        within("tables, at most", TABLE_COUNT.item.max_int(), tables.len())?;
        for (t, g) in tables.iter().zip(&shapes.geometries) {
            within("a table's columns, at most", width.item.max_int(), g.width)?;
            within(
                "a table's public inputs, at most",
                public.item.max_int(),
                t.public_inputs.len(),
            )?;
        }
        let tables = tables
            .iter()
            .zip(&shapes.geometries)
            .map(|(t, g)| RecordedTable {
                log_rows: g.log_rows,
                width: g.width,
                log_quotient_chunks: g.log_quotient_chunks,
                public_inputs: t.public_inputs.to_vec(),
            })
            .collect();
        Ok(Self {
            params: *params,
            tables,
            proof,
        })
    }

    /// Checks that its proof shows each of `airs`' tables, with the public inputs recorded,
    /// for the statement `context` ([`verify_tables`]), once each AIR's shape with the
    /// recorded parameters is the one recorded. Every table is taken as underived
    /// (`TableStatement::derived`), so a record whose tables' inputs are derived (a
    /// layer's) is verified by its own reader, which builds them.
    ///
    /// # Errors
    /// Another number of tables or another shape, or as [`verify_tables`].
    pub fn verify(
        &self,
        context: &[u8],
        airs: &[&dyn TableAir],
        policy: &VerifyPolicy,
    ) -> Result<(), TablesError> {
        expect("tables", airs.len(), self.tables.len())?;
        for (air, table) in airs.iter().zip(&self.tables) {
            let info = air.info()?;
            let g = air.geometry(&info, &self.params)?;
            expect("a table's rows (log2)", g.log_rows, table.log_rows)?;
            expect("a table's width", g.width, table.width)?;
            expect(
                "a table's quotient chunks (log2)",
                g.log_quotient_chunks,
                table.log_quotient_chunks,
            )?;
        }
        let statements: Vec<TableStatement<'_>> = airs
            .iter()
            .zip(&self.tables)
            .map(|(&air, t)| TableStatement::new(air, &t.public_inputs))
            .collect();
        verify_tables(context, &statements, &self.proof, &self.params, policy).map(drop)
    }

    /// The canonical encoding.
    ///
    /// # Panics
    /// If a value exceeds its encoded width, which no record of [`new`](Self::new) or
    /// [`from_bytes`](Self::from_bytes) has.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode().bytes
    }

    /// The byte layout of [`to_bytes`](Self::to_bytes), section by section.
    pub fn sections(&self) -> Vec<Section> {
        self.encode().sections
    }

    /// The encoding and its sections.
    pub(crate) fn encode(&self) -> Encoder {
        let heads = self.heads();
        let rounds = self.proof.queries.fri.len();
        let mut e = Encoder::default();
        let mut head = Head {
            magic: TABLES_MAGIC.to_vec(),
            version: PROTOCOL_VERSION,
            params: self.params,
            hash: self.params.hash.id(),
            ..Head::default()
        };
        // The length is the encoding's: written once, then again with its value.
        for _ in 0..2 {
            e = Encoder::default();
            for section in &HEADER[..SHARED_HEADER] {
                e.write(section, &head, At::default());
            }
            e.write(&TABLE_COUNT, &heads, At::default());
            for k in 0..heads.len() {
                for section in &TABLE_SHAPE {
                    e.write(section, &heads, At::table(k));
                }
            }
            for (section, at) in tables_body_sections(heads.len(), rounds) {
                e.write(section, self, at);
            }
            head.length = e.bytes.len() as u64;
        }
        e
    }

    /// The shapes the header states.
    fn heads(&self) -> Vec<TableHead> {
        self.tables
            .iter()
            .map(|t| TableHead {
                log_rows: t.log_rows,
                width: t.width,
                log_quotient_chunks: t.log_quotient_chunks,
                public_inputs: t.public_inputs.len(),
            })
            .collect()
    }

    /// Decodes a record: its header first, then, once the stated length is within the
    /// header's bound and is the length of `bytes`, the rest.
    ///
    /// # Errors
    /// Bad magic, an unsupported version, an invalid header, another length than stated,
    /// invalid query positions or a non-canonical field element.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofFormatError> {
        let mut d = Decoder::new(bytes);
        let header = decode_header(&mut d)?;
        let max = header.max_len().ok_or(ProofFormatError::TooLarge)?;
        check_stated(header.head.length, max, bytes.len())?;
        let TablesHeader {
            head, mut sizes, ..
        } = header;
        let heads = sizes.heads.clone();
        let count = heads.len();
        let mut record = Self {
            params: head.params,
            tables: heads
                .iter()
                .map(|h| RecordedTable {
                    log_rows: h.log_rows,
                    width: h.width,
                    log_quotient_chunks: h.log_quotient_chunks,
                    public_inputs: Vec::new(),
                })
                .collect(),
            proof: TablesProof {
                trace_root: [0; 32],
                quotient_root: [0; 32],
                ood: vec![OodValues::default(); count],
                fri_roots: Vec::new(),
                final_poly: Vec::new(),
                pow_nonce: 0,
                queries: QueryOpenings {
                    fri: empty_layers(sizes.arities.len()),
                    ..QueryOpenings::default()
                },
            },
        };
        for (section, at) in tables_body_sections(count, sizes.arities.len()) {
            let q = record.proof.queries.positions.len();
            let n = sizes.exact(section.count, q, at);
            d.read(section, &mut record, at.index(), n)?;
            if section.count == Count::Queries {
                sizes
                    .set_positions(&record.proof.queries.positions)
                    .map_err(ProofFormatError::Tables)?;
            }
        }
        d.finish()?;
        Ok(record)
    }

    /// The most bytes a record can have, from its header alone (up to and with the tables'
    /// shapes): every query at its own position and no node shared.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) for the header.
    pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
        Ok(Self::stated_len(header)?.1)
    }

    /// The length a record's header states and [`max_len`](Self::max_len), once the
    /// stated length is within it.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) for the header, or a stated length above the
    /// bound.
    pub(crate) fn stated_len(header: &[u8]) -> Result<(u64, u64), ProofFormatError> {
        let header = decode_header(&mut Decoder::new(header))?;
        let max = header.max_len().ok_or(ProofFormatError::TooLarge)?;
        let stated = header.head.length;
        if stated > max {
            return Err(ProofFormatError::TooLong { max, stated });
        }
        Ok((stated, max))
    }
}

/// The most bytes of a record's header: the shared header, the table count and the most
/// tables' shapes.
pub(crate) const MAX_TABLES_HEADER_LEN: usize = {
    let mut len = TABLE_COUNT.item.bytes();
    let mut i = 0;
    while i < SHARED_HEADER {
        len += header_count(HEADER[i].count, 0) * HEADER[i].item.bytes();
        i += 1;
    }
    let mut shape = 0;
    let mut k = 0;
    while k < TABLE_SHAPE.len() {
        shape += TABLE_SHAPE[k].item.bytes();
        k += 1;
    }
    len + shape * TABLE_COUNT.item.max_int() as usize
};

/// A decoded, checked header: its fields, the counts they fix, and its length in bytes.
struct TablesHeader {
    head: Head,
    sizes: TablesSizes,
    len: usize,
}

impl TablesHeader {
    /// The most bytes a record with this header can have, or `None` on overflow.
    fn max_len(&self) -> Option<u64> {
        let rounds = self.sizes.arities.len();
        let tables = self.sizes.heads.len();
        tables_body_sections(tables, rounds).try_fold(self.len as u64, |total, (s, at)| {
            self.sizes
                .max(s.count, at)?
                .checked_mul(s.item.bytes() as u64)?
                .checked_add(total)
        })
    }
}

/// Reads the header and checks it: the magic, the version, the hash, and tables that a
/// proof with those parameters can have (at least one, tallest first, each within the
/// parameters' ranges, its quotient's chunks within the blowup).
fn decode_header(d: &mut Decoder<'_>) -> Result<TablesHeader, ProofFormatError> {
    if !d.bytes.starts_with(&TABLES_MAGIC) {
        return Err(ProofFormatError::BadMagic);
    }
    let mut head = Head::default();
    for section in &HEADER[..SHARED_HEADER] {
        d.read(section, &mut head, 0, header_count(section.count, 0))?;
    }
    if head.version != PROTOCOL_VERSION {
        return Err(ProofFormatError::UnsupportedVersion {
            got: head.version,
            supported: PROTOCOL_VERSION,
        });
    }
    head.params.hash =
        MerkleHash::from_id(head.hash).ok_or(ProofFormatError::UnknownHash(head.hash))?;
    d.hash = head.params.hash;
    let mut heads = Vec::new();
    d.read(
        &TABLE_COUNT,
        &mut heads,
        0,
        header_count(TABLE_COUNT.count, 0),
    )?;
    for k in 0..heads.len() {
        for section in &TABLE_SHAPE {
            d.read(section, &mut heads, k, header_count(section.count, 0))?;
        }
    }
    Ok(TablesHeader {
        sizes: TablesSizes::new(&head.params, heads)?,
        head,
        len: d.pos,
    })
}

/// What a record's counts resolve against: its tables' shapes and, once its positions are
/// known, their plan.
struct TablesSizes {
    heads: Vec<TableHead>,
    params: StarkParams,
    /// The FRI rounds' arities, with the shorter tables rolled in.
    arities: Vec<usize>,
    /// The trace tree's shape (the quotient tree's has the same heights).
    tree: MixedShape,
    plan: Option<QueryPlan>,
    /// Nodes of each tree's batch opening at the positions.
    opening: usize,
}

impl TablesSizes {
    /// The counts of tables of `heads` proven with `params`.
    ///
    /// # Errors
    /// No tables, tables not tallest first, or a shape the parameters cannot prove.
    fn new(params: &StarkParams, heads: Vec<TableHead>) -> Result<Self, ProofFormatError> {
        let invalid = |k: usize, why: String| ProofFormatError::Tables(format!("table {k}: {why}"));
        if heads.is_empty() || heads.windows(2).any(|w| w[0].log_rows < w[1].log_rows) {
            return Err(ParamsError::TablesOrder.into());
        }
        for (k, h) in heads.iter().enumerate() {
            params.validate(h.log_rows)?;
            if h.width == 0 {
                return Err(invalid(k, "no columns".into()));
            }
            if h.log_quotient_chunks > params.log_blowup {
                return Err(invalid(
                    k,
                    format!(
                        "2^{} quotient chunks need more than blowup {}",
                        h.log_quotient_chunks,
                        1 << params.log_blowup
                    ),
                ));
            }
        }
        let arities = fri_arities(heads.iter().map(|h| h.log_rows), params);
        let tree = MixedShape::new(
            heads
                .iter()
                .map(|h| TableShape {
                    log_height: h.log_rows + params.log_blowup,
                    width: h.width,
                })
                .collect(),
        )
        .map_err(|e| ProofFormatError::Tables(e.to_string()))?;
        Ok(Self {
            heads,
            params: *params,
            arities,
            tree,
            plan: None,
            opening: 0,
        })
    }

    fn log_lde(&self) -> usize {
        self.tree.height()
    }

    /// Items of `count` at `at` once the positions are [`set`](Self::set_positions); `q`
    /// before they are planned.
    ///
    /// # Panics
    /// For an opening's or a layer's count before the positions are planned.
    fn exact(&self, count: Count, q: usize, at: At) -> usize {
        let head = |at: At| &self.heads[at.table.expect("a table's section")];
        let quotient_width = |h: &TableHead| Ext3::DEGREE << h.log_quotient_chunks;
        match count {
            Count::Exactly(n) => n,
            Count::PublicInputs => head(at).public_inputs,
            Count::Width => head(at).width,
            Count::QuotientWidth => quotient_width(head(at)),
            Count::FriRounds => self.arities.len(),
            Count::FinalPoly => 1 << self.params.log_final_poly_len,
            Count::Queries => q,
            Count::TablesTraceRows => q * self.heads.iter().map(|h| h.width).sum::<usize>(),
            Count::TablesQuotientRows => q * self.heads.iter().map(quotient_width).sum::<usize>(),
            Count::Opening => self.opening,
            Count::LayerValues => self.planned(at).unknown_count(),
            Count::LayerOpening => self.planned(at).opening_len(),
            Count::Workload | Count::States | Count::TraceRows | Count::QuotientRows => {
                panic!("{count:?} is not a tables proof's count")
            }
        }
    }

    /// The most items of `count` at `at` in any record of these shapes, or `None` on
    /// overflow.
    fn max(&self, count: Count, at: At) -> Option<u64> {
        let q = self.params.num_queries as u64;
        let layer = at.layer.unwrap_or(0);
        let log_len = self.log_lde() - self.arities[..layer].iter().sum::<usize>();
        let log_arity = self.arities.get(layer).copied().unwrap_or(0);
        match count {
            Count::Opening => Some(q * self.log_lde() as u64),
            Count::LayerValues => Some(q * ((1 << log_arity) - 1)),
            Count::LayerOpening => Some(q * (log_len - log_arity) as u64),
            Count::TablesTraceRows | Count::TablesQuotientRows => {
                (self.exact(count, 1, at) as u64).checked_mul(q)
            }
            Count::Exactly(_)
            | Count::PublicInputs
            | Count::Width
            | Count::QuotientWidth
            | Count::FriRounds
            | Count::FinalPoly
            | Count::Queries => Some(self.exact(count, self.params.num_queries, at) as u64),
            Count::Workload | Count::States | Count::TraceRows | Count::QuotientRows => {
                panic!("{count:?} is not a tables proof's count")
            }
        }
    }

    /// Plans the queries at `positions`, after checking they are 1..=num_queries strictly
    /// increasing positions of the tallest table's LDE domain.
    fn set_positions(&mut self, positions: &[usize]) -> Result<(), String> {
        let num_queries = self.params.num_queries;
        if !(1..=num_queries).contains(&positions.len()) {
            return Err(format!(
                "{} positions, must be 1..={num_queries}",
                positions.len()
            ));
        }
        let plan = QueryPlan::new(self.log_lde(), &self.arities, positions)
            .map_err(|e| format!("invalid query positions: {e}"))?;
        self.opening = self.tree.opening_len(positions);
        self.plan = Some(plan);
        Ok(())
    }

    fn planned(&self, at: At) -> &PlannedLayer {
        &self
            .plan
            .as_ref()
            .expect("the positions are planned")
            .layers()[at.layer.expect("a FRI layer's section")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::tests::{CONTEXT, airs, lenient as policy, params, proven, statements};
    use crate::test_air::CounterAir;

    fn dyn_airs(airs: &[CounterAir]) -> Vec<&dyn TableAir> {
        airs.iter().map(|a| a as &dyn TableAir).collect()
    }

    /// The record of the tables of `tables::tests::airs` proven with `hash`.
    fn record(hash: MerkleHash) -> TablesRecord {
        let (airs, public, proof) = proven(hash);
        TablesRecord::new(&statements(&airs, &public), &params(hash), proof).unwrap()
    }

    fn verified(bytes: &[u8]) -> Result<(), String> {
        let record = TablesRecord::from_bytes(bytes).map_err(|e| e.to_string())?;
        record
            .verify(CONTEXT, &dyn_airs(&airs()), &policy())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_record_reads_back_and_verifies() {
        for hash in MerkleHash::ALL {
            let record = record(hash);
            let bytes = record.to_bytes();
            assert_eq!(TablesRecord::from_bytes(&bytes), Ok(record.clone()));
            assert_eq!(verified(&bytes), Ok(()));
            assert_eq!(record.to_bytes(), bytes, "one encoding");
            // The sections tile the bytes, the header's bound holds them.
            let sections = record.sections();
            assert_eq!(sections[0].range.start, 0);
            assert!(
                sections
                    .windows(2)
                    .all(|w| w[0].range.end == w[1].range.start)
            );
            assert_eq!(sections.last().unwrap().range.end, bytes.len());
            assert!(sections.iter().any(|s| s.table == Some(3)));
            let max = TablesRecord::max_len(&bytes).unwrap();
            assert!(bytes.len() as u64 <= max, "{} > {max}", bytes.len());
        }
    }

    #[test]
    fn every_section_changed_is_refused() {
        for hash in MerkleHash::ALL {
            let record = record(hash);
            let bytes = record.to_bytes();
            // Every section of the layout occurs.
            for row in crate::tables_layout() {
                assert!(
                    record
                        .sections()
                        .iter()
                        .any(|s| s.name == row.name && !s.range.is_empty()),
                    "{}",
                    row.name
                );
            }
            for section in record.sections().iter().filter(|s| !s.range.is_empty()) {
                for at in [section.range.start, section.range.end - 1] {
                    let mut changed = bytes.clone();
                    changed[at] ^= 1;
                    assert!(
                        verified(&changed).is_err(),
                        "{hash}: {} (table {:?}, layer {:?}) byte {at} changed",
                        section.name,
                        section.table,
                        section.layer
                    );
                }
            }
        }
    }

    #[test]
    fn bad_lengths_headers_and_shapes_are_refused() {
        let record = record(MerkleHash::Keccak256);
        let bytes = record.to_bytes();
        let decoded = |bytes: &[u8]| TablesRecord::from_bytes(bytes);
        assert!(matches!(
            decoded(&bytes[..bytes.len() - 1]),
            Err(ProofFormatError::StatedLength { .. })
        ));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            decoded(&longer),
            Err(ProofFormatError::StatedLength { .. })
        ));
        let at = |name: &str| {
            record
                .sections()
                .into_iter()
                .find(|s| s.name == name)
                .unwrap()
                .range
        };
        let mut stated = bytes.clone();
        stated[at("length")].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            decoded(&stated),
            Err(ProofFormatError::TooLong { .. })
        ));
        let mut magic = bytes.clone();
        magic[..4].copy_from_slice(&crate::MAGIC);
        assert_eq!(decoded(&magic), Err(ProofFormatError::BadMagic));
        let mut version = bytes.clone();
        version[at("version")][0] ^= 1;
        assert!(matches!(
            decoded(&version),
            Err(ProofFormatError::UnsupportedVersion { .. })
        ));
        let mut none = bytes.clone();
        none[at("table count")][0] = 0;
        assert_eq!(
            decoded(&none),
            Err(ProofFormatError::Header(ParamsError::TablesOrder))
        );
        // The last table stated taller than the first.
        let mut order = bytes.clone();
        let rows = record
            .sections()
            .into_iter()
            .rfind(|s| s.name == "table log rows")
            .unwrap()
            .range;
        order[rows][0] = 9;
        assert_eq!(
            decoded(&order),
            Err(ProofFormatError::Header(ParamsError::TablesOrder))
        );
        let mut chunks = bytes.clone();
        chunks[at("table log quotient chunks")][0] = 2;
        assert!(matches!(decoded(&chunks), Err(ProofFormatError::Tables(_))));
        let mut width = bytes.clone();
        width[at("table width")].copy_from_slice(&[0, 0]);
        assert!(matches!(decoded(&width), Err(ProofFormatError::Tables(_))));
        assert!(TablesRecord::from_bytes(&bytes[..3]).is_err());
    }

    #[test]
    fn a_record_of_other_tables_is_refused() {
        let record = record(MerkleHash::Keccak256);
        let airs = airs();
        let fewer = dyn_airs(&airs[..3]);
        assert!(matches!(
            record.verify(CONTEXT, &fewer, &policy()),
            Err(TablesError::Shape { what: "tables", .. })
        ));
        let taller = [CounterAir { log_rows: 8 }];
        let mut other = dyn_airs(&airs);
        other[0] = &taller[0];
        assert!(matches!(
            record.verify(CONTEXT, &other, &policy()),
            Err(TablesError::Shape {
                what: "a table's rows (log2)",
                ..
            })
        ));
        assert!(
            record
                .verify(b"other", &dyn_airs(&airs), &policy())
                .is_err()
        );
    }
}
