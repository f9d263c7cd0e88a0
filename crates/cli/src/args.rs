//! Command-line arguments, validated as they are parsed.

use std::path::PathBuf;

use ballast_stark::{LOG_BLOWUP_RANGE, MerkleHash, Regime};
use ballast_workloads::{
    DEFAULT_WORKLOAD, Flag, FlagValues, SHARED_FLAGS, WORKLOADS, parse_digest,
};
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};

/// ballast: a reproducible STARK prover with its allocator policy compiled in.
#[derive(Parser)]
#[command(name = "cli", version, arg_required_else_help = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Prove a statement (by default the embedded Keccak-256 chain) and write the proof.
    Prove(ProveArgs),
    /// Check a proof; exit 0 if valid, 1 if invalid, 2 if unreadable.
    Verify(VerifyArgs),
    /// Replace a whole proof made with --hash poseidon2 by its compressed proof: a recursive
    /// layer's proof that its segments verify (over a tree of nodes over them, at most four
    /// children a node, for several; docs/recursion.md).
    Compress(CompressArgs),
    /// Join parts proven by separate workers (`prove --parts`) into the whole proof; its
    /// segments are checked, but only `verify` judges it against a security floor.
    Bundle(BundleArgs),
    /// Show a statement's security round by round without proving it, or each layer of a
    /// proof's (--proof), as a soundcalc TOML (github.com/ethereum/soundcalc) whose comments
    /// give ballast's figures.
    Security(SecurityArgs),
    /// Report the build, the allocator policy in effect, threads and CUDA devices.
    Doctor(DoctorArgs),
}

/// The statement and its parameters: what `prove` proves and `security` analyses.
#[derive(Args)]
pub struct StatementArgs {
    /// What to prove: one of the workloads below.
    #[arg(long, default_value = DEFAULT_WORKLOAD, value_parser = PossibleValuesParser::new(WORKLOADS.iter().map(|w| w.name)))]
    pub workload: String,
    /// The statement's shape: the flags of every workload, as given.
    #[command(flatten)]
    pub shape: WorkloadFlags,
    /// Blowup factor of the low-degree extension: 2, 4, 8, 16, 32 or 64.
    #[arg(long = "blowup", id = "blowup", value_name = "BLOWUP", default_value = "2", value_parser = parse_log_blowup)]
    pub log_blowup: usize,
    /// FRI queries; by default the fewest that reach --security-bits.
    #[arg(long, conflicts_with = "security_bits")]
    pub queries: Option<usize>,
    /// Proof-of-work grinding bits.
    #[arg(long, default_value_t = 16)]
    pub pow_bits: u32,
    /// Target security in bits, judged in --regime, from which the number of queries is
    /// derived [default: 128].
    #[arg(long)]
    pub security_bits: Option<u32>,
    /// How --security-bits is judged: `jbr` (provable, up to the Johnson bound), `udr`
    /// (provable, unique decoding) or `conjectured` (the ethSTARK conjecture).
    #[arg(long, default_value = "jbr", value_parser = str::parse::<Regime>)]
    pub regime: Regime,
    /// The hash every Merkle tree of the proof commits with: `keccak` (Keccak-256, the
    /// fastest on CPUs) or `poseidon2` (Poseidon2 over Goldilocks: what a proof verifying
    /// this one inside an AIR can afford to recompute).
    #[arg(long, default_value = "keccak", value_parser = parse_hash)]
    pub hash: MerkleHash,
}

/// The flags that shape a statement, of every registered workload ([`WORKLOADS`]) and the
/// shared ones, as given: which of them a workload takes is the registry's to judge.
pub struct WorkloadFlags(pub FlagValues);

/// Every statement flag once, with each workload that takes it and its help there (none:
/// every workload, with the flag's own help).
fn statement_flags() -> Vec<(&'static Flag, Vec<(&'static str, &'static str)>)> {
    let mut flags: Vec<(&'static Flag, Vec<(&'static str, &'static str)>)> =
        SHARED_FLAGS.iter().map(|f| (f, Vec::new())).collect();
    for row in WORKLOADS {
        for flag in row.flags {
            match flags.iter_mut().find(|(f, _)| f.name == flag.name) {
                Some((_, owners)) if !owners.is_empty() => owners.push((row.name, flag.help)),
                Some(_) => {}
                None => flags.push((flag, vec![(row.name, flag.help)])),
            }
        }
    }
    flags
}

/// A statement flag's help: the shared help, or the workloads that take it before theirs
/// (once when they agree, each with its own when they differ).
fn statement_help(flag: &Flag, owners: &[(&str, &str)]) -> String {
    let Some(&(_, first)) = owners.first() else {
        return flag.help.to_owned();
    };
    if owners.iter().all(|&(_, help)| help == first) {
        let names: Vec<&str> = owners.iter().map(|&(name, _)| name).collect();
        return format!("{}: {first}", names.join(", "));
    }
    owners
        .iter()
        .map(|(name, help)| format!("{name}: {help}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every statement flag's id: what `security --proof` takes none of.
fn statement_ids() -> Vec<&'static str> {
    let fixed = [
        "workload",
        "blowup",
        "queries",
        "pow_bits",
        "security_bits",
        "regime",
        "hash",
    ];
    let shape = statement_flags().into_iter().map(|(flag, _)| flag.name);
    fixed.into_iter().chain(shape).collect()
}

impl FromArgMatches for WorkloadFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut values = FlagValues::default();
        for (flag, _) in statement_flags() {
            if let Some(value) = matches.get_one::<String>(flag.name) {
                values.insert(flag.name, value.as_str());
            }
        }
        Ok(Self(values))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for WorkloadFlags {
    fn augment_args(command: clap::Command) -> clap::Command {
        statement_flags()
            .into_iter()
            .fold(command, |command, (flag, owners)| {
                command.arg(
                    Arg::new(flag.name)
                        .long(flag.name)
                        .value_name(flag.value_name)
                        .help(statement_help(flag, &owners)),
                )
            })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// Flags of `cli prove`.
#[derive(Args)]
#[command(after_long_help = prove_help())]
pub struct ProveArgs {
    /// The statement and its parameters.
    #[command(flatten)]
    pub statement: StatementArgs,
    /// Where to write the proof (atomically) [default: proof.bin, or part-I.bin with
    /// --parts].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Prove only one of this many near-equal, contiguous ranges of the statement's
    /// segments and write it as a part, for `cli bundle` to join (scale-out; docs/deploy.md).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub parts: Option<u32>,
    /// Which of the --parts ranges to prove, from 0 [default: $JOB_COMPLETION_INDEX
    /// (a Kubernetes Indexed Job) or $SLURM_ARRAY_TASK_ID (a Slurm job array)].
    #[arg(long, value_name = "I", requires = "parts")]
    pub part_index: Option<u32>,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write the compressed proof instead (`cli compress`): the statement must be proven
    /// with --hash poseidon2; several segments get a tree of nodes under the last layer.
    #[arg(long, conflicts_with = "parts")]
    pub compress: bool,
    /// The last layer's parameters, with --compress.
    #[command(flatten)]
    pub layer: LastLayerArgs,
    /// Where the segments are proven: `auto` uses CUDA when a device is usable and its free
    /// memory holds a segment, and the CPU otherwise. Proofs are the same bytes either way.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
}

/// What `--help` says about the workloads: each registered one, its flags and defaults.
fn workloads_help() -> String {
    let mut out = String::from("Workloads:\n");
    for row in WORKLOADS {
        let default = if row.name == DEFAULT_WORKLOAD {
            " (default)"
        } else {
            ""
        };
        out.push_str(&format!("  {}{default}\n", row.name));
        for line in row.about.lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out
}

/// What `cli prove --help` adds: the workloads, examples and scale-out.
fn prove_help() -> String {
    workloads_help()
        + "
Examples:
  cli prove                                         the embedded keccak-chain statement, 128
                                                    bits provable (blowup 2, 227 queries)
  cli prove --steps 10000 --log-rows 14             10,000 hashes in segments of 682
  cli prove --seed <64 hex digits> --segments 8
  cli prove --workload fibonacci --sequences 16 --log-rows 19 --segments 4
  cli prove --blowup 4                              128 bits provable with 113 queries
  cli security --blowup 8 --soundcalc ballast.toml  the figures, and a TOML for soundcalc

Scale-out (docs/deploy.md):
  cli prove --segments 64 --parts 8 --part-index 3 -o part-3.bin
                                                    segments 24..32 of 64, as a part
  cli bundle part-*.bin -o proof.bin                the same bytes as one host's proof"
}

/// The values of `prove --backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// CUDA when a device is usable, else the CPU.
    Auto,
    /// The CPU.
    Cpu,
    /// CUDA; an error when no device is usable.
    Cuda,
}

/// Flags of `cli verify`.
#[derive(Args)]
pub struct VerifyArgs {
    /// The proof file.
    pub proof: PathBuf,
    /// Reject proofs whose parameters give less security than this, judged in --regime.
    #[arg(long, default_value_t = ballast_stark::DEFAULT_MIN_SECURITY_BITS)]
    pub min_security_bits: u32,
    /// How --min-security-bits is judged: `jbr` (provable, up to the Johnson bound), `udr`
    /// (provable, unique decoding) or `conjectured`.
    #[arg(long, default_value = "jbr", value_parser = str::parse::<Regime>)]
    pub regime: Regime,
    /// Refuse a proof whose Merkle trees commit with another hash than this: `keccak` or
    /// `poseidon2` [default: either]. A compressed proof relies on both (its segments'
    /// Poseidon2, its last layer's Keccak-256), so either value refuses it.
    #[arg(long, value_parser = parse_hash)]
    pub hash: Option<MerkleHash>,
    /// Refuse a proof of more bytes than this, judged by the length its header states
    /// before the rest is read [default: 1 GiB, every proof of the shipped shapes].
    #[arg(long, value_name = "BYTES", default_value_t = ballast_stark::DEFAULT_MAX_PROOF_BYTES,
          hide_default_value = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_proof_bytes: u64,
    /// Reject the proof unless it proves exactly this statement: the 64-hex-digit digest
    /// `cli prove` prints.
    #[arg(long, value_parser = parse_digest, value_name = "DIGEST")]
    pub expect_statement: Option<[u8; 32]>,
    /// Accept a valid part (some of a statement's segments, `cli prove --parts`) as well as
    /// a whole proof. Without it a part is refused (exit 1): it proves no statement.
    #[arg(long, conflicts_with = "expect_statement")]
    pub part: bool,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Also write the result as JSON to this file.
    #[arg(long)]
    pub report: Option<PathBuf>,
}

/// The last layer of a compressed proof: its parameters, the fewest queries that reach the
/// security asked for.
#[derive(Args)]
pub struct LastLayerArgs {
    /// Blowup factor of the last layer: 8, 16, 32 or 64 (its AIRs' degree-7 constraints
    /// take 8 or more) [default: 64].
    #[arg(long = "layer-blowup", value_name = "BLOWUP", value_parser = parse_log_blowup)]
    pub layer_log_blowup: Option<usize>,
    /// Proof-of-work grinding bits of the last layer [default: 28].
    #[arg(long, value_name = "BITS")]
    pub layer_pow_bits: Option<u32>,
}

impl LastLayerArgs {
    /// The last layer's log2 blowup and grinding bits, the defaults
    /// ([`DEFAULT_LAST_LAYER`](ballast_recursion::DEFAULT_LAST_LAYER)) where not given.
    pub fn last(&self) -> (usize, u32) {
        let (log_blowup, pow_bits) = ballast_recursion::DEFAULT_LAST_LAYER;
        (
            self.layer_log_blowup.unwrap_or(log_blowup),
            self.layer_pow_bits.unwrap_or(pow_bits),
        )
    }

    /// Whether any of its flags was given.
    pub fn given(&self) -> bool {
        self.layer_log_blowup.is_some() || self.layer_pow_bits.is_some()
    }
}

/// Flags of `cli compress`.
#[derive(Args)]
pub struct CompressArgs {
    /// The proof file: a whole proof made with --hash poseidon2.
    pub proof: PathBuf,
    /// Where to write the compressed proof (atomically).
    #[arg(short, long, default_value = "compressed.bin")]
    pub output: PathBuf,
    /// The last layer's parameters.
    #[command(flatten)]
    pub layer: LastLayerArgs,
    /// Target security of the last layer (and of each node under it, for several segments)
    /// in bits, judged in --regime, from which its number of queries is derived.
    #[arg(long, default_value_t = crate::plan::DEFAULT_SECURITY_BITS)]
    pub security_bits: u32,
    /// How --security-bits is judged: `jbr`, `udr` or `conjectured`.
    #[arg(long, default_value = "jbr", value_parser = str::parse::<Regime>)]
    pub regime: Regime,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// Flags of `cli bundle`.
#[derive(Args)]
pub struct BundleArgs {
    /// The parts, in any order: together they must cover every segment exactly once.
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,
    /// Where to write the proof (atomically).
    #[arg(short, long, default_value = "proof.bin")]
    pub output: PathBuf,
    /// Worker threads for checking the parts [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// Flags of `cli security`.
#[derive(Args)]
#[command(after_long_help = workloads_help())]
pub struct SecurityArgs {
    /// The statement and its parameters, as `cli prove` takes them.
    #[command(flatten)]
    pub statement: StatementArgs,
    /// Analyse this proof file's layers instead of a statement: a proof's segments, or a
    /// compressed proof's segments, node (for several segments) and last layer (one
    /// `[[circuits]]` each). It must verify.
    #[arg(long, value_name = "FILE", conflicts_with_all = statement_ids())]
    pub proof: Option<PathBuf>,
    /// Write the soundcalc TOML to this file (atomically) and print the figures as a
    /// table, instead of printing the TOML.
    #[arg(long, value_name = "FILE")]
    pub soundcalc: Option<PathBuf>,
}

/// Flags of `cli doctor`.
#[derive(Args)]
pub struct DoctorArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The hash a `--hash` value names: `keccak` or `poseidon2`.
fn parse_hash(value: &str) -> Result<MerkleHash, String> {
    MerkleHash::from_name(value).ok_or_else(|| {
        let names: Vec<&str> = MerkleHash::ALL.iter().map(|h| h.name()).collect();
        format!("{value} is not one of {}", names.join(", "))
    })
}

/// A blowup factor the format supports ([`LOG_BLOWUP_RANGE`]), as its log2.
fn parse_log_blowup(value: &str) -> Result<usize, String> {
    let log = |b: usize| b.trailing_zeros() as usize;
    match value.parse::<usize>() {
        Ok(b) if b.is_power_of_two() && LOG_BLOWUP_RANGE.contains(&log(b)) => Ok(log(b)),
        _ => {
            let supported: Vec<String> = LOG_BLOWUP_RANGE.map(|l| (1 << l).to_string()).collect();
            Err(format!("{value} is not one of {}", supported.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn arguments_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_proofs_security_takes_no_statement_flag() {
        let command = StatementArgs::augment_args(clap::Command::new("statement"));
        let flags: std::collections::BTreeSet<&str> = command
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .collect();
        assert_eq!(flags, statement_ids().into_iter().collect());
    }

    #[test]
    fn the_last_layers_defaults_are_stated_in_its_help() {
        let (log_blowup, pow_bits) = ballast_recursion::DEFAULT_LAST_LAYER;
        let help = Cli::command()
            .find_subcommand_mut("compress")
            .unwrap()
            .render_long_help()
            .to_string();
        for default in [
            format!("[default: {}]", 1 << log_blowup),
            format!("[default: {pow_bits}]"),
        ] {
            assert!(help.contains(&default), "{default}: {help}");
        }
    }

    #[test]
    fn blowup_is_a_power_of_two_between_two_and_sixty_four() {
        assert_eq!(parse_log_blowup("2"), Ok(1));
        assert_eq!(parse_log_blowup("16"), Ok(4));
        assert_eq!(parse_log_blowup("64"), Ok(6));
        assert_eq!(
            parse_log_blowup("128"),
            Err("128 is not one of 2, 4, 8, 16, 32, 64".into())
        );
        for bad in ["0", "1", "3", "128", "x", ""] {
            assert!(parse_log_blowup(bad).is_err(), "{bad}");
        }
    }
}
