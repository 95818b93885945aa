//! Builds the C++ peers (cpp/, see cpp/peers.h) when their packages are present: `tbb`
//! (oneTBB) with clang++ or the system C++ compiler, and `omp` (LLVM's libomp) with
//! clang++. A peer whose compiler, headers or library is missing is left out: the
//! harness still builds, and says which peers it left out and why (`HEIST_PEERS_LEFT_OUT`,
//! read by src/peers/mod.rs). `scripts/install-cpp-peers.sh` installs them on Debian.
//!
//! `gomp` (GCC's libgomp) is built with g++ into a shared library of its own, which the
//! harness loads with `RTLD_DEEPBIND`: libomp also defines libgomp's `GOMP_*` entry
//! points, and linked into one program the two would resolve each other's calls.
//!
//! `HEIST_BENCH_PEERS=none` (or a comma-separated subset such as `tbb`) builds fewer.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(heist_tbb)");
    println!("cargo::rustc-check-cfg=cfg(heist_omp)");
    println!("cargo::rustc-check-cfg=cfg(heist_gomp)");
    println!("cargo::rerun-if-changed=cpp");
    println!("cargo::rerun-if-env-changed=HEIST_BENCH_PEERS");
    println!("cargo::rerun-if-env-changed=CXX");
    // A package installed or removed changes dpkg's status file: look for the peers again.
    if Path::new("/var/lib/dpkg/status").exists() {
        println!("cargo::rerun-if-changed=/var/lib/dpkg/status");
    }
    println!("cargo::rustc-env=HEIST_BENCH_RUSTC={}", rustc_version());

    let wanted = env::var("HEIST_BENCH_PEERS").unwrap_or_else(|_| "tbb,omp,gomp".into());
    let wants = |p: &str| wanted.split(',').any(|w| w.trim() == p);
    let clang = find_clang();
    let mut left_out = Vec::new();
    let mut compilers = Vec::new();

    if !wants("tbb") {
        left_out.push("tbb: not asked for (HEIST_BENCH_PEERS)".to_string());
    } else {
        let cxx = clang.clone().or_else(system_cxx);
        match cxx.ok_or("no C++ compiler".to_string()).and_then(build_tbb) {
            Ok(v) => {
                println!("cargo::rustc-cfg=heist_tbb");
                compilers.push(format!("tbb: {v}"));
            }
            Err(e) => left_out.push(format!("tbb: {e}")),
        }
    }
    if !wants("omp") {
        left_out.push("omp: not asked for (HEIST_BENCH_PEERS)".to_string());
    } else {
        let built = clang
            .ok_or_else(|| "no clang++ (LLVM's OpenMP needs clang)".to_string())
            .and_then(build_omp);
        match built {
            Ok(v) => {
                println!("cargo::rustc-cfg=heist_omp");
                compilers.push(format!("omp: {v}"));
            }
            Err(e) => left_out.push(format!("omp: {e}")),
        }
    }
    if !wants("gomp") {
        left_out.push("gomp: not asked for (HEIST_BENCH_PEERS)".to_string());
    } else {
        match build_gomp() {
            Ok(v) => {
                println!("cargo::rustc-cfg=heist_gomp");
                compilers.push(format!("gomp: {v}"));
            }
            Err(e) => left_out.push(format!("gomp: {e}")),
        }
    }
    println!(
        "cargo::rustc-env=HEIST_PEERS_LEFT_OUT={}",
        left_out.join("; ")
    );
    println!("cargo::rustc-env=HEIST_PEERS_CXX={}", compilers.join("; "));
}

/// `rustc -V` of the compiler building this crate.
fn rustc_version() -> String {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    first_line(Command::new(rustc).arg("-V")).unwrap_or_else(|| "unknown".into())
}

fn first_line(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().next().map(|l| l.trim().to_string())
}

/// clang++ (`CXX` if it is a clang), else the newest versioned clang++ on PATH.
fn find_clang() -> Option<PathBuf> {
    let from_env = env::var("CXX").ok().filter(|c| c.contains("clang"));
    let names = from_env.into_iter().chain(
        std::iter::once("clang++".to_string())
            .chain((11..=20).rev().map(|v| format!("clang++-{v}"))),
    );
    names
        .map(PathBuf::from)
        .find(|c| first_line(Command::new(c).arg("--version")).is_some())
}

/// The system C++ compiler (`CXX`, else `c++`), if it runs.
fn system_cxx() -> Option<PathBuf> {
    let c = PathBuf::from(env::var("CXX").unwrap_or_else(|_| "c++".into()));
    first_line(Command::new(&c).arg("--version")).map(|_| c)
}

/// A build of one peer's source with `cxx`, optimised as the Rust kernels are.
fn peer_build(cxx: &Path, source: &str) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .compiler(cxx)
        .file(format!("cpp/{source}"))
        .include("cpp")
        .std("c++17")
        .opt_level(3)
        .debug(false)
        .warnings(false)
        // pi's segments must be split exactly as in Rust: no fused multiply-adds.
        .flag("-ffp-contract=off")
        .cargo_warnings(false);
    b
}

/// The directory of `lib` as `cxx` finds it, or an error naming the package to install.
fn library_dir(cxx: &Path, lib: &str, package: &str) -> Result<PathBuf, String> {
    let found = first_line(Command::new(cxx).arg(format!("-print-file-name={lib}")));
    match found.map(PathBuf::from) {
        Some(p) if p.is_absolute() && p.exists() => {
            Ok(p.parent().map(Path::to_path_buf).unwrap_or_default())
        }
        _ => Err(format!("{lib} not found (package {package})")),
    }
}

fn build_tbb(cxx: PathBuf) -> Result<String, String> {
    let dir = library_dir(&cxx, "libtbb.so", "libtbb-dev")?;
    peer_build(&cxx, "tbb.cpp")
        .try_compile("heist_peer_tbb")
        .map_err(|e| format!("cpp/tbb.cpp does not build (package libtbb-dev?): {e}"))?;
    println!("cargo::rustc-link-search=native={}", dir.display());
    println!("cargo::rustc-link-lib=dylib=tbb");
    Ok(compiler_name(&cxx))
}

fn build_omp(clang: PathBuf) -> Result<String, String> {
    // Where clang's own libomp lies: beside its resource directory (Debian:
    // /usr/lib/llvm-N/lib), if not on the linker's usual paths.
    let beside = first_line(Command::new(&clang).arg("-print-resource-dir"))
        .map(PathBuf::from)
        .and_then(|r| Some(r.parent()?.parent()?.to_path_buf()))
        .filter(|d| d.join("libomp.so").exists());
    let dir = match beside {
        Some(d) => d,
        None => library_dir(&clang, "libomp.so", "libomp-dev")?,
    };
    peer_build(&clang, "omp.cpp")
        .flag("-fopenmp=libomp")
        .try_compile("heist_peer_omp")
        .map_err(|e| format!("cpp/omp.cpp does not build (package libomp-dev?): {e}"))?;
    // Only libomp from this directory: LLVM also puts a libgomp.so there, an alias of
    // libomp, which must not stand in for GCC's.
    println!("cargo::rustc-link-arg={}", dir.join("libomp.so").display());
    Ok(compiler_name(&clang))
}

/// cpp/omp.cpp built by g++ with libgomp into `$OUT_DIR/libheist_peer_gomp.so`, whose
/// path the harness gets as `HEIST_GOMP_LIB`.
fn build_gomp() -> Result<String, String> {
    let gxx = PathBuf::from("g++");
    if first_line(Command::new(&gxx).arg("--version")).is_none() {
        return Err("no g++".into());
    }
    library_dir(&gxx, "libgomp.so", "g++")?;
    let lib = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?)
        .join("libheist_peer_gomp.so");
    let out = Command::new(&gxx)
        .args([
            "-std=c++17",
            "-O3",
            "-ffp-contract=off",
            "-fPIC",
            "-shared",
            "-fopenmp",
        ])
        .args([
            "-DHEIST_OMP_API=heist_gomp_api",
            "-Icpp",
            "cpp/omp.cpp",
            "-o",
        ])
        .arg(&lib)
        .output()
        .map_err(|e| format!("g++ does not run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cpp/omp.cpp does not build with g++ -fopenmp: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    println!("cargo::rustc-env=HEIST_GOMP_LIB={}", lib.display());
    Ok(compiler_name(&gxx))
}

fn compiler_name(cxx: &Path) -> String {
    first_line(Command::new(cxx).arg("--version")).unwrap_or_else(|| cxx.display().to_string())
}
