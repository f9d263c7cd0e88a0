//! A test-only workload, registered under the `test-workload` feature: x_{i+1} = x_i² + 1
//! over Goldilocks from x₀ = `start`, one column, degree 2. It exists to show that a
//! workload is its module and one row in [`WORKLOADS`](crate::WORKLOADS): `cli` proves,
//! verifies, bundles and describes it with nothing else edited (`crates/cli/tests/cli.rs`).
//! Segments overlap in one row, as Fibonacci's do.

use ballast_air::{Air, ConstraintBuilder, Frame};
use ballast_field::{Felt, RowBlocks};
use ballast_stark::{
    MAX_LOG_ROWS, MAX_SEGMENTS, ParamsError, ProofFormatError, Workload, check_range,
};
use serde_json::{Map, Value};

use crate::flags::{Flag, FlagError, FlagValues, FromFlags};
use crate::{Describe, thousands};

/// x_{i+1} = x_i² + 1 from `start`, in `segments` segments of 2^`log_rows` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SquareChain {
    /// x₀, a canonical field element.
    pub start: u64,
    /// log2 of the rows per segment.
    pub log_rows: usize,
    /// Number of segments.
    pub segments: usize,
}

impl SquareChain {
    /// Steps the statement covers: segments·(2^k − 1).
    fn steps(&self) -> u64 {
        self.segments as u64 * ((1u64 << self.log_rows) - 1)
    }
}

/// One step.
fn step(x: Felt) -> Felt {
    x * x + Felt::ONE
}

impl Workload for SquareChain {
    const TAG: u8 = 3;
    const NAME: &'static str = "square-chain";
    const ENCODED_LEN: usize = 8 + 1 + 4;
    type Air = SquareChainAir;
    type State = Felt;

    fn validate(&self) -> Result<(), ParamsError> {
        if self.start >= Felt::MODULUS {
            return Err(ParamsError::OutOfRange {
                name: "start",
                value: usize::try_from(self.start).unwrap_or(usize::MAX),
                min: 0,
                max: usize::try_from(Felt::MODULUS - 1).unwrap_or(usize::MAX),
            });
        }
        check_range("segments", self.segments, 1, MAX_SEGMENTS)?;
        check_range("log_rows", self.log_rows, 1, MAX_LOG_ROWS)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_LEN);
        out.extend_from_slice(&self.start.to_le_bytes());
        out.push(self.log_rows as u8);
        out.extend_from_slice(&(self.segments as u32).to_le_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, ParamsError> {
        let workload = Self {
            start: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            log_rows: usize::from(bytes[8]),
            segments: u32::from_le_bytes(bytes[9..13].try_into().expect("4 bytes")) as usize,
        };
        workload.validate()?;
        Ok(workload)
    }

    fn segments(&self) -> usize {
        self.segments
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn state_len(&self) -> usize {
        Felt::BYTES
    }

    fn encode_state(&self, state: &Felt, out: &mut Vec<u8>) {
        out.extend_from_slice(&state.to_le_bytes());
    }

    fn decode_state(&self, bytes: &[u8], offset: usize) -> Result<Felt, ProofFormatError> {
        Felt::from_le_bytes(bytes.try_into().expect("8 bytes"))
            .ok_or(ProofFormatError::NonCanonical { offset })
    }

    fn start(&self) -> Felt {
        Felt::new(self.start)
    }

    fn air(&self, _segment: usize) -> SquareChainAir {
        SquareChainAir {
            log_rows: self.log_rows,
        }
    }

    fn public_inputs(&self, _segment: usize, start: &Felt, end: &Felt) -> Vec<Felt> {
        vec![*start, *end]
    }

    fn trace(&self, _segment: usize, start: &Felt, table: &mut RowBlocks) -> Felt {
        let mut x = *start;
        for row in 0..table.height() {
            table.write_row(row, &[x]);
            x = step(x);
        }
        table.get(table.height() - 1, 0)
    }

    fn run(&self, _segment: usize, start: &Felt) -> Felt {
        (1..1usize << self.log_rows).fold(*start, |x, _| step(x))
    }
}

impl FromFlags for SquareChain {
    const ABOUT: &'static str = "\
A test-only workload: x_{i+1} = x_i² + 1 over Goldilocks from x₀ = --start, for --segments
segments of 2^--log-rows rows [defaults: x₀ = 2, 2^10 rows, 2 segments].";
    const FLAGS: &'static [Flag] = &[Flag {
        name: "start",
        value_name: "X0",
        help: "the first value x₀, below the Goldilocks prime [default: 2]",
    }];

    fn from_flags(flags: &FlagValues) -> Result<Self, FlagError> {
        let chain = Self {
            start: flags.number("start")?.unwrap_or(2),
            log_rows: flags.number("log-rows")?.unwrap_or(10),
            segments: flags.number("segments")?.unwrap_or(2),
        };
        chain.validate().map_err(|e| FlagError::of_params(&e))?;
        Ok(chain)
    }
}

impl Describe for SquareChain {
    fn summary(&self, end: &Felt) -> String {
        format!("{}, ending at {end}", self.computation())
    }

    fn json(&self, end: &Felt) -> Map<String, Value> {
        let mut map = self.computation_json();
        map.insert("end".into(), end.as_u64().into());
        map
    }

    fn computation(&self) -> String {
        format!(
            "square-chain: x² + 1 from {} for {} steps ({} segments × 2^{} rows)",
            self.start,
            thousands(self.steps()),
            self.segments,
            self.log_rows
        )
    }

    fn computation_json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("start".into(), self.start.into());
        map.insert("log_rows".into(), self.log_rows.into());
        map.insert("segments".into(), self.segments.into());
        map.insert("steps".into(), self.steps().into());
        map
    }
}

/// One segment: one column, x' = x² + 1; public inputs the first and the last value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SquareChainAir {
    /// log2 of the rows.
    pub log_rows: usize,
}

impl Air for SquareChainAir {
    fn id(&self) -> &str {
        "ballast/square-chain/v1"
    }

    fn width(&self) -> usize {
        1
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn num_public_inputs(&self) -> usize {
        2
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let (x, next) = (f.current[0], f.next[0]);
        b.transition(next - (x * x + B::Expr::from(Felt::ONE)));
        b.first_row(x - f.public_inputs[0]);
        b.last_row(x - f.public_inputs[1]);
    }
}
