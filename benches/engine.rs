//! Criterion benchmarks of the engine's hot paths. Run: `cargo bench --bench engine`.
//!
//! Targets (README, "Performance"): the sweep evaluates a cell in about a microsecond of one
//! core; a two-objective front of 1e6 points takes well under 100 ms; one sigmoid fit on 50
//! points well under a millisecond.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::Array2;
use rlfrontier::analysis::pareto::{Sense, front_2d, nondominated_ranks};
use rlfrontier::catalog::Catalog;
use rlfrontier::fit::sigmoid::{SigmoidParams, bootstrap, fit};
use rlfrontier::ledger::evaluate;
use rlfrontier::rng::SplitMix64;
use rlfrontier::spec;

fn grid(name: &str) -> spec::Grid {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("grids")
        .join(format!("{name}.toml"));
    spec::load(&path, &Catalog::embedded()).unwrap()
}

fn engine(c: &mut Criterion) {
    let g = grid("ten-million");
    let cell = g.cell(4_321_987).unwrap();
    c.bench_function("ledger of one cell", |b| {
        b.iter(|| evaluate(black_box(&cell.run_config(&g))))
    });
    // What the 90% predictive interval costs: the point prediction against the prediction with
    // its interval (two shifted ceilings, two shifted progresses, the default base's two ends).
    let signal = {
        let config = cell.run_config(&g);
        rlfrontier::outcome::CellSignal::of(&config, &evaluate(&config))
    };
    c.bench_function("prediction of one cell, point only", |b| {
        b.iter(|| rlfrontier::outcome::predict_score(&g.outcome, black_box(&signal)))
    });
    c.bench_function("prediction of one cell with its 90% interval", |b| {
        b.iter(|| rlfrontier::outcome::predict(&g.outcome, black_box(&signal)))
    });
    // A cell whose step was priced at another budget of the grid: the ledger finished at its
    // stop and the prepared prediction at its iterations (what 19 of every 20 cells of
    // ten-million cost, `rlfrontier::evaluate::CellEvaluator`).
    {
        let config = cell.run_config(&g);
        let step = rlfrontier::ledger::step_ledger(&config).unwrap();
        let prepared = rlfrontier::outcome::PreparedPrediction::of(&g.outcome, &signal);
        c.bench_function("a cell at another budget of a priced step", |b| {
            b.iter(|| {
                let ledger = step.with_stop(black_box(&config));
                prepared.at(ledger.iterations as f64)
            })
        });
        // The same cell as a sweep's first pass prices it: the stop without the waste and the
        // median only (the interval and the point come only for cells the aggregate takes).
        let mut ledger = *step.step();
        c.bench_function("the same cell, first pass (no waste, median only)", |b| {
            b.iter(|| {
                step.with_stop_into_without_waste(black_box(&config), &mut ledger);
                prepared.median_at(ledger.iterations as f64).score
            })
        });
        // What the first pass reads of that cell besides its score: from the step's sums (what
        // a sweep does) against summing the ledger's phases for each value.
        use rlfrontier::evaluate::CostShares;
        step.with_stop_into_without_waste(&config, &mut ledger);
        c.bench_function("a cell's costs and shares from its step's sums", |b| {
            b.iter(|| CostShares::of_step(&g, black_box(&ledger), step.sums()))
        });
        c.bench_function("a cell's costs and shares from its ledger's phases", |b| {
            b.iter(|| CostShares::of(&g, black_box(&ledger)))
        });
    }
    // The decode drain of one replica, uncached: what a cell pays when its decode inputs differ
    // from its neighbours' (the ledger memoises it per thread otherwise).
    {
        use rlfrontier::ledger::decode::{ReplicaBatch, StepCost, drain};
        use rlfrontier::ledger::lengths::CappedLognormal;
        let catalog = Catalog::embedded();
        let step = StepCost::new(
            catalog.model("qwen2.5-7b").unwrap(),
            catalog.gpu("h100-sxm").unwrap(),
            catalog.default_engine(),
            1.0,
        );
        let batch = ReplicaBatch {
            sequences: 512.0,
            prompt_tokens: 256.0,
            lengths: CappedLognormal::new(6000.0, 0.8, 16_384.0),
            max_running: 256.0,
            kv_capacity_tokens: 600_000.0,
        };
        c.bench_function("decode drain of one replica (uncached)", |b| {
            b.iter(|| drain(black_box(&step), black_box(&batch)))
        });
    }
    c.bench_function("decode a cell index", |b| {
        b.iter(|| g.cell(black_box(7_654_321)))
    });
    c.bench_function("sweep pass 1, 100k cells (one core)", |b| {
        b.iter(|| rlfrontier::engine::aggregate_chunk(&g, black_box(1_000_000..1_100_000), 2500))
    });
    // What cells.csv spends most of its time on: a table number, seven significant digits.
    let mut rng = SplitMix64::new(11, 0);
    let values: Vec<f64> = (0..1000)
        .map(|_| (1.0 + 9.0 * rng.uniform()) * 10f64.powi(rng.below(14) as i32 - 4))
        .collect();
    c.bench_function("format 1,000 table numbers", |b| {
        b.iter(|| {
            values
                .iter()
                .map(|&x| rlfrontier::format::number_text(black_box(x)).as_str().len())
                .sum::<usize>()
        })
    });
}

/// The two ways a sweep's pass 2 writes a cell: its `cells.csv` row, or the same row filed into
/// typed Parquet columns (`report::columns`), on the same 1,000 evaluated cells.
fn cell_rows(c: &mut Criterion) {
    use rlfrontier::report::cells::{CellRow, cell_columns};
    use rlfrontier::report::columns::{ColumnCollector, ColumnValue};
    use rlfrontier::report::parquet::cells_column_type;
    let g = grid("ten-million");
    let mut intervals = rlfrontier::evaluate::GridIntervals::default();
    let rows: Vec<CellRow> = (4_000_000..4_001_000u64)
        .filter_map(|id| rlfrontier::evaluate::evaluate_cell(&g, id))
        .map(|e| {
            let interval = intervals.of(&g, &e.cell.indices).cloned();
            CellRow::of(&g.axes, &e, false, interval.as_ref())
        })
        .collect();
    let types: Vec<_> = cell_columns()
        .iter()
        .map(|n| cells_column_type(n))
        .collect();
    c.bench_function("1,000 cells.csv rows", |b| {
        b.iter(|| {
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::with_capacity(1 << 20));
            for row in black_box(&rows) {
                w.serialize(row).unwrap();
            }
            w.into_inner().unwrap().len()
        })
    });
    c.bench_function("1,000 rows filed into Parquet columns", |b| {
        b.iter(|| {
            let mut columns = ColumnCollector::new(&types);
            for row in black_box(&rows) {
                columns.push_fields(|c| row.file(c)).unwrap();
            }
            columns.finish()
        })
    });
    // What Parquet adds once the rows are filed: encoding, statistics and Snappy, one column
    // after the other here (a sweep encodes a row group's columns on all threads).
    let filed = {
        let mut columns = ColumnCollector::new(&types);
        for row in &rows {
            columns.push_fields(|c| row.file(c)).unwrap();
        }
        columns.finish()
    };
    let names = cell_columns();
    c.bench_function("1,000 filed rows encoded as a Parquet row group", |b| {
        b.iter(|| {
            let mut table =
                rlfrontier::report::parquet::ParquetTable::new(Vec::new(), &names, types.clone())
                    .unwrap();
            table
                .write_row_group(std::slice::from_ref(black_box(&filed)))
                .unwrap();
            table.finish().unwrap().len()
        })
    });
}

fn fronts(c: &mut Criterion) {
    let mut rng = SplitMix64::new(7, 0);
    let n = 1_000_000;
    let cost: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let score: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    c.bench_function("2-objective front, 1e6 random points", |b| {
        b.iter(|| {
            front_2d(
                black_box(&cost),
                black_box(&score),
                [Sense::Minimize, Sense::Maximize],
            )
            .unwrap()
        })
    });
    let m = 2000;
    let matrix = Array2::from_shape_fn((m, 3), |_| rng.uniform());
    c.bench_function("non-dominated sorting, 2000 points x 3 objectives", |b| {
        b.iter(|| {
            nondominated_ranks(
                black_box(matrix.view()),
                &[Sense::Minimize, Sense::Maximize, Sense::Maximize],
            )
            .unwrap()
        })
    });
}

fn fits(c: &mut Criterion) {
    let truth = SigmoidParams {
        base: 0.3,
        ceiling: 0.62,
        steepness: 1.4,
        midpoint: 2500.0,
    };
    let mut rng = SplitMix64::new(11, 0);
    let x: Vec<f64> = (1..=50).map(|i| 100.0 * i as f64).collect();
    let y: Vec<f64> = x
        .iter()
        .map(|&v| truth.predict(v) + 0.004 * rng.normal())
        .collect();
    c.bench_function("sigmoid fit, 50 points", |b| {
        b.iter(|| fit(0.3, black_box(&x), black_box(&y)).unwrap())
    });
    let f = fit(0.3, &x, &y).unwrap();
    let mut group = c.benchmark_group("bootstrap");
    group.sample_size(10);
    group.bench_function("1,000 resamples of a 50-point fit", |b| {
        b.iter(|| bootstrap(&f, &x, &y, &[1e4], black_box(1000), 1, 0))
    });
    group.finish();
}

/// Pilot calibration in the number of runs: 1,000 runs of 13 checkpoints each (the size at which
/// the by-run cross-validation holds out folds instead of single runs), 20 bootstrap replicates.
fn calibration(c: &mut Criterion) {
    use rlfrontier::config::RewardKind;
    use rlfrontier::fit::calibrate::{Observation, calibrate, default_free};
    use rlfrontier::outcome::{Benchmark, CellSignal, OutcomeParams, StartKind, predict};
    let truth = OutcomeParams::default();
    let mut rng = SplitMix64::new(3, 0);
    let mut observations = Vec::new();
    for run in 0..1000 {
        let size = [1.5e9, 3.1e9, 7.6e9][run % 3];
        let rollouts = [64.0, 256.0, 1024.0][(run / 3) % 3];
        for step in 0..=12 {
            let signal = CellSignal {
                policy_params: size,
                iterations: (step * 20) as f64,
                update_epochs: 1.0,
                useful_rollouts_per_step: rollouts,
                coverage: 0.85,
                truncation_rate: 0.02,
                pass_rate_mean: rlfrontier::outcome::params::REFERENCE_PASS_RATE,
                response_cap_tokens: 8192.0,
                start: StartKind::Base,
                benchmark: Benchmark::Standard,
                reward: RewardKind::Rule,
                lora_rank: None,
                measured_base_score: None,
                pass_share_per_step: None,
                ability_score: None,
            };
            let value = predict(&truth, &signal).score + 0.01 * rng.normal();
            observations.push(Observation { run, signal, value });
        }
    }
    let free = default_free(&observations);
    let mut group = c.benchmark_group("calibration");
    group.sample_size(10);
    group.bench_function("1,000 runs x 13 checkpoints, 20 replicates", |b| {
        b.iter(|| calibrate(&truth, black_box(&observations), &free, 20, 1).unwrap())
    });
    group.finish();
}

/// A front of 100,000 mutually non-dominated points in three objectives (the plane
/// x + y + z = 1.5): the staircase scan's worst case for the generic O(n·F) scan.
fn large_fronts(c: &mut Criterion) {
    use rlfrontier::analysis::pareto::first_front;
    let mut rng = SplitMix64::new(5, 0);
    let matrix = Array2::from_shape_fn((100_000, 3), |_| rng.uniform());
    let plane = Array2::from_shape_fn((100_000, 3), |(i, j)| match j {
        2 => 1.5 - matrix[[i, 0]] - matrix[[i, 1]],
        _ => matrix[[i, j]],
    });
    c.bench_function(
        "first front, 1e5 non-dominated points x 3 objectives",
        |b| b.iter(|| first_front(black_box(plane.view()), &[Sense::Minimize; 3]).unwrap()),
    );
}

/// A TRL JSON config of 160,000 keys (one line per key): the import's key-line index and its
/// bounded suggestions keep it linear.
fn large_imports(c: &mut Criterion) {
    use rlfrontier::config::import::{TrlLaunch, import_trl};
    let mut text =
        String::from("{\n \"model_name_or_path\": \"Qwen/Qwen2.5-7B\",\n \"max_steps\": 100");
    for i in 0..160_000 {
        text.push_str(&format!(",\n \"key_{i}\": {i}"));
    }
    text.push_str("\n}\n");
    let mut group = c.benchmark_group("imports");
    group.sample_size(10);
    group.bench_function("TRL JSON config of 160,000 keys", |b| {
        b.iter(|| {
            import_trl(
                black_box(&text),
                TrlLaunch {
                    processes: None,
                    num_generations: None,
                },
            )
            .unwrap()
        })
    });
    group.finish();
}

/// User catalogs of 5,000 and 20,000 model entries, half of them overriding the name of an entry
/// given earlier in the same file: the merge indexes entries by id, so the time grows linearly
/// with the entries (4× the entries, about 4× the time; issue 24 found a quadratic merge).
fn large_catalogs(c: &mut Criterion) {
    use rlfrontier::catalog::Catalog;
    let mut group = c.benchmark_group("catalogs");
    group.sample_size(10);
    for models in [2_500, 10_000] {
        let mut text = String::new();
        for i in 0..models {
            text.push_str(&format!(
                "[[model]]\nid = \"bench-{i}\"\nname = \"bench/{i}\"\nlayers = 28\nhidden = 3584\nheads = 28\nkv_heads = 4\nhead_dim = 128\nintermediate = 18944\nvocab = 152064\ntied_embeddings = false\nqkv_bias = true\npublished_params = 7615616512\nsource = \"bench\"\ndate = \"2026-12\"\n\n"
            ));
        }
        for i in 0..models {
            text.push_str(&format!(
                "[[model]]\nid = \"bench-{i}\"\nname = \"bench/renamed-{i}\"\n\n"
            ));
        }
        let path = std::path::Path::new("bench-catalog.toml");
        Catalog::load_texts(&[(path, &text)]).expect("the bench catalog merges");
        let name = format!(
            "catalog merge, {} model entries ({models} overrides)",
            2 * models
        );
        group.bench_function(name, |b| {
            b.iter(|| Catalog::load_texts(black_box(&[(path, text.as_str())])).unwrap())
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    engine,
    cell_rows,
    fronts,
    fits,
    calibration,
    large_fronts,
    large_imports,
    large_catalogs
);
criterion_main!(benches);
