//! `rlfrontier front POINTS.csv --columns a,b[,c...] --senses min,max[,...] [--id-column C]`: the
//! non-dominated rows of any CSV (two columns: sort-and-sweep; more: non-dominated sorting), by
//! data-row index and by id, with the time the computation took, so the front can be compared
//! with other tools on the same data. Rows with an empty objective are skipped and counted.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use std::time::Instant;

use ndarray::Array2;
use serde_json::json;

use super::emit;
use rlfrontier::analysis::pareto::{Sense, first_front, front_2d};
use rlfrontier::error::{Error, Result};

/// Arguments of `front`.
#[derive(Debug, Args)]
pub struct FrontArgs {
    /// A CSV with a header.
    pub points: PathBuf,
    /// Objective columns, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub columns: Vec<String>,
    /// One sense per column: min or max, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub senses: Vec<Sense>,
    /// The column that names a row in the output (`front_ids`) [default: the first column, e.g.
    /// `cell_id` in cells.csv].
    #[arg(long)]
    pub id_column: Option<String>,
}

/// Computes and prints the front.
pub fn run(args: &FrontArgs, out: &mut dyn Write) -> Result<()> {
    let columns: Vec<&str> = args.columns.iter().map(|c| c.trim()).collect();
    let senses = &args.senses;
    if columns.len() < 2 || senses.len() != columns.len() {
        return Err(Error::in_flag(
            "--senses",
            "give one sense (min or max) per column, and at least two columns",
        ));
    }
    let mut reader = csv::Reader::from_reader(rlfrontier::input::open_table(&args.points)?);
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(&args.points, Some(1), "", e.to_string()))?
        .clone();
    let index: Vec<usize> = columns
        .iter()
        .map(|c| {
            headers
                .iter()
                .position(|h| h == *c)
                .ok_or_else(|| Error::in_file(&args.points, Some(1), c, "no such column"))
        })
        .collect::<Result<_>>()?;
    let id_index = match &args.id_column {
        Some(name) => headers.iter().position(|h| h == name).ok_or_else(|| {
            Error::in_file(&args.points, Some(1), name, "no such column (--id-column)")
        })?,
        None => 0,
    };
    let table = read_points(&mut reader, &args.points, &columns, &index, id_index)?;
    let (values, rows, ids, skipped) = (table.values, table.rows, table.ids, table.skipped);
    let started = Instant::now();
    let front: Vec<usize> = if columns.len() == 2 {
        front_2d(&values[0], &values[1], [senses[0], senses[1]])
            .map_err(|e| Error::in_file(&args.points, None, "", e.to_string()))?
    } else {
        let n = values[0].len();
        let m = columns.len();
        let matrix = Array2::from_shape_fn((n, m), |(i, j)| values[j][i]);
        first_front(matrix.view(), senses)
            .map_err(|e| Error::in_file(&args.points, None, "", e.to_string()))?
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut sorted = front.clone();
    sorted.sort_unstable();
    let front_rows: Vec<usize> = sorted.iter().map(|&i| rows[i]).collect();
    let front_ids: Vec<&str> = sorted.iter().map(|&i| ids[i].as_str()).collect();
    let v = json!({
        "points": values[0].len(),
        "skipped_rows": skipped,
        "front_size": front.len(),
        "seconds": seconds,
        "front_rows": front_rows,
        "id_column": headers.get(id_index).unwrap_or(""),
        "front_ids": front_ids,
    });
    let mut text = serde_json::to_string(&v).expect("json");
    text.push('\n');
    emit(out, &text)
}

/// The objectives of a points table, column by column, with each kept row's data-row index and
/// id; rows with an empty objective (an infeasible cell of cells.csv has no score) are skipped
/// and counted.
struct Points {
    values: Vec<Vec<f64>>,
    rows: Vec<usize>,
    ids: Vec<String>,
    skipped: usize,
}

/// Reads the objective `columns` (at `index`) and the id column of every row of `reader`.
fn read_points(
    reader: &mut csv::Reader<impl std::io::Read>,
    path: &std::path::Path,
    columns: &[&str],
    index: &[usize],
    id_index: usize,
) -> Result<Points> {
    let mut points = Points {
        values: vec![Vec::new(); columns.len()],
        rows: Vec::new(),
        ids: Vec::new(),
        skipped: 0,
    };
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| Error::in_file(path, Some(k + 2), "", e.to_string()))?;
        if index
            .iter()
            .any(|&i| record.get(i).is_none_or(|x| x.trim().is_empty()))
        {
            points.skipped += 1;
            continue;
        }
        for (j, &i) in index.iter().enumerate() {
            let v: f64 = record
                .get(i)
                .and_then(|x| x.trim().parse().ok())
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| {
                    Error::in_file(path, Some(k + 2), columns[j], "not a finite number")
                })?;
            points.values[j].push(v);
        }
        points.rows.push(k);
        points
            .ids
            .push(record.get(id_index).unwrap_or("").to_string());
    }
    Ok(points)
}
