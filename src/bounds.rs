//! Physical bounds of the numbers the tool reads, in one place: a catalog, a grid, a project
//! file or a flag that sets the same quantity is held to the same range. The ranges are wide
//! enough for any real hardware and run, and narrow enough that no product of them overflows a
//! double or saturates a count (a GPU of 1e-300 TFLOP/s priced a run at 3.4e38 seconds).

/// A closed range a quantity must lie in, with its unit and why the ends are where they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
    /// The unit, as the message shows it (empty for a fraction or a count).
    pub unit: &'static str,
    /// What lies outside, in words.
    pub why: &'static str,
}

impl Bound {
    /// `value` when finite and within the range, else the one-line reason (the caller names
    /// where it came from).
    pub fn check(&self, value: f64) -> Result<f64, String> {
        if value.is_finite() && (self.min..=self.max).contains(&value) {
            return Ok(value);
        }
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        Err(format!(
            "{} is outside {}{unit} to {}{unit}: {}",
            crate::format::number(value),
            crate::format::number(self.min),
            crate::format::number(self.max),
            self.why
        ))
    }
}

/// Dense BF16 throughput of one GPU: 1 TFLOP/s to 100 PFLOP/s.
pub const BF16_TFLOPS: Bound = Bound {
    min: 1.0,
    max: 1e5,
    unit: "TFLOP/s",
    why: "no accelerator is slower than 1 TFLOP/s or faster than 100 PFLOP/s in dense BF16",
};

/// Memory of one GPU, GiB.
pub const MEMORY_GIB: Bound = Bound {
    min: 1.0,
    max: 1e5,
    unit: "GiB",
    why: "a GPU's memory is between 1 GiB and about 100 TiB",
};

/// Host↔device copy rate of one GPU's offload, GB/s.
pub const OFFLOAD_GB_PER_SECOND: Bound = Bound {
    min: 0.01,
    max: 10_000.0,
    unit: "GB/s",
    why: "a host link moves between 10 MB/s and 10 TB/s",
};

/// Memory bandwidth of one GPU: 0.1 to 100 TB/s.
pub const BANDWIDTH_TBPS: Bound = Bound {
    min: 0.1,
    max: 100.0,
    unit: "TB/s",
    why: "a GPU's memory bandwidth is between 0.1 and 100 TB/s",
};

/// Price of one GPU-hour, US$: as grids bound it.
pub const USD_PER_GPU_HOUR: Bound = Bound {
    min: 0.01,
    max: 1000.0,
    unit: "US$/GPU-hour",
    why: "no GPU rents for less than a cent or more than $1,000 an hour",
};

/// A fraction of peak (an MFU or a bandwidth efficiency).
pub const EFFICIENCY: Bound = Bound {
    min: 0.001,
    max: 1.0,
    unit: "",
    why: "an efficiency is a fraction of peak, at least 0.1%",
};

/// NVLink line rate of one GPU, one direction, GB/s.
pub const NVLINK_GBPS: Bound = Bound {
    min: 1.0,
    max: 1e5,
    unit: "GB/s",
    why: "a GPU link runs between 1 GB/s and 100 TB/s",
};

/// GPUs of one cluster or one NVLink domain: as grids bound them.
pub const GPUS: Bound = Bound {
    min: 1.0,
    // config::MAX_LEVER, the grids' bound (a test checks they agree).
    max: 1e8,
    unit: "GPUs",
    why: "a run has between 1 and 100 million GPUs",
};

/// A count of prompts, examples or pairs in a dataset.
pub const DATASET_ITEMS: Bound = Bound {
    min: 1.0,
    max: 1e12,
    unit: "",
    why: "a dataset holds between 1 and a trillion items",
};

/// Tokens of one prompt, response or example.
pub const SEQUENCE_TOKENS: Bound = Bound {
    min: 1.0,
    max: 1e8,
    unit: "tokens",
    why: "a sequence is between 1 and 100 million tokens",
};

/// A price per thousand tokens of a hosted fine-tuning service, US$.
pub const USD_PER_1K_TOKENS: Bound = Bound {
    min: 1e-6,
    max: 1e3,
    unit: "US$",
    why: "no service charges less than a millionth of a dollar or more than $1,000 per thousand tokens",
};

/// A multiplier on a price or a cost (a hosted service's RL surcharge).
pub const MULTIPLIER: Bound = Bound {
    min: 1e-3,
    max: 1e3,
    unit: "",
    why: "a multiplier is between 0.001 and 1,000",
};

/// Seconds of one measured step or run.
pub const MEASURED_SECONDS: Bound = Bound {
    min: 1e-6,
    max: 1e9,
    unit: "s",
    why: "a measured time is between a microsecond and 30 years",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_takes_its_ends_and_refuses_the_rest_with_the_reason() {
        assert_eq!(BF16_TFLOPS.check(1.0), Ok(1.0));
        assert_eq!(BF16_TFLOPS.check(1e5), Ok(1e5));
        for bad in [1e-300, 0.0, -1.0, f64::NAN, f64::INFINITY, 1.1e5] {
            let m = BF16_TFLOPS.check(bad).unwrap_err();
            assert!(m.contains("TFLOP/s") && m.contains("100 PFLOP/s"), "{m}");
        }
        assert!(EFFICIENCY.check(1.5).is_err());
        assert!(GPUS.check(18446744073709551615.0).is_err());
    }
}
