//! The many-rank simulator (filled in below).
pub fn main(_costs: Option<&str>, _ranks: &str, _tree: &str) {
    super::die("model: not built yet");
}
