//! Combining what every rank brought to an exchange ([`super::Peers`]):
//! numbers travel as little-endian `f64`s.

use anyhow::{Result, bail};

/// `values` as the bytes of an exchange.
pub fn to_bytes(values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|value| value.to_le_bytes())
        .collect()
}

/// The values of [`to_bytes`]; `what` names them in the error.
pub fn from_bytes(bytes: &[u8], what: &str) -> Result<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        bail!(
            "{what}: {} bytes are not a whole number of f64s",
            bytes.len()
        );
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|chunk| f64::from_le_bytes(chunk.try_into().unwrap()))
        .collect())
}

/// Per iteration, the slowest rank's time, from each rank's times (as many
/// on every rank).
pub fn slowest(by_rank: &[Vec<f64>]) -> Result<Vec<f64>> {
    let iterations = by_rank.first().map_or(0, Vec::len);
    if let Some((rank, times)) = by_rank
        .iter()
        .enumerate()
        .find(|(_, times)| times.len() != iterations)
    {
        bail!(
            "rank {rank} timed {} iterations, rank 0 {iterations}",
            times.len()
        );
    }
    Ok((0..iterations)
        .map(|iteration| {
            by_rank
                .iter()
                .map(|times| times[iteration])
                .fold(0.0, f64::max)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_rank_of_each_iteration() {
        let by_rank = vec![vec![1.0, 5.0, 2.0], vec![3.0, 4.0, 2.5]];
        assert_eq!(slowest(&by_rank).unwrap(), vec![3.0, 5.0, 2.5]);
        assert_eq!(slowest(&[vec![1.5]]).unwrap(), vec![1.5]);
        assert_eq!(
            slowest(&[vec![1.0, 2.0], vec![1.0]])
                .unwrap_err()
                .to_string(),
            "rank 1 timed 1 iterations, rank 0 2"
        );
    }

    #[test]
    fn numbers_travel_as_bytes() {
        let values = [0.25, -3.0, f64::INFINITY];
        assert_eq!(from_bytes(&to_bytes(&values), "times").unwrap(), values);
        assert!(from_bytes(&[0; 7], "times").is_err());
    }
}
