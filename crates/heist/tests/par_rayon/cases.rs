// Included by par_rayon.rs into a module that imports either `rayon::prelude::*`,
// `rayon::iter` and `rayon::iter::Either` or heist's; nothing else here may name either
// crate.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;

/// Each case's name and its result, printed.
pub fn all() -> Vec<(&'static str, String)> {
    let v: Vec<u64> = (0..10_000u64).map(|x| x.wrapping_mul(0x9E37_79B9) % 1000).collect();
    let words: Vec<String> = (0..3000).map(|i| format!("w{}", i % 97)).collect();
    let text = "the quick\nbrown fox  jumps\r\nover\tthe lazy dög\n\nend".repeat(50);
    let mut out: Vec<(&'static str, String)> = Vec::new();
    macro_rules! case {
        ($name:literal, $e:expr) => {
            out.push(($name, format!("{:?}", $e)))
        };
    }

    // Sources.
    case!("range u64", (0..5000u64).into_par_iter().map(|x| x * x).sum::<u64>());
    case!("range i64", (-3000i64..3000).into_par_iter().filter(|x| x % 7 == 0).collect::<Vec<_>>());
    case!("range incl", (1u32..=100).into_par_iter().map(|x| if x % 5 == 0 { 2.0 } else { 1.0 }).product::<f64>());
    case!("range usize len", (3usize..1003).into_par_iter().len());
    case!("slice", v.par_iter().copied().max());
    case!("vec into", v.clone().into_par_iter().map(|x| x + 1).collect::<Vec<_>>());
    case!("array", [5, 3, 9, 1].into_par_iter().min());
    case!("option", Some(4).into_par_iter().chain(None).collect::<Vec<i32>>());
    let dq: VecDeque<u64> = v.iter().copied().collect();
    case!("vecdeque ref", dq.par_iter().sum::<u64>());
    case!("vecdeque into", dq.clone().into_par_iter().rev().take(5).collect::<Vec<_>>());
    case!("par_chunks", v.par_chunks(7).map(|c| c.iter().sum::<u64>()).collect::<Vec<_>>());
    case!("par_chunks_exact", v.par_chunks_exact(7).map(|c| c[0]).collect::<Vec<_>>());
    case!("par_windows", v.par_windows(3).filter(|w| w[0] < w[1] && w[1] < w[2]).count());
    let mut m = v.clone();
    m.par_chunks_mut(10).for_each(|c| c.reverse());
    case!("par_chunks_mut", m);
    let mut m = v.clone();
    m.par_chunks_exact_mut(3).for_each(|c| c.swap(0, 2));
    case!("par_chunks_exact_mut", m);
    let mut m = v.clone();
    m.par_iter_mut().for_each(|x| *x *= 3);
    case!("par_iter_mut", m);
    case!("par_chars", text.par_chars().filter(|c| c.is_alphabetic()).collect::<String>());
    case!("par_bytes", text.par_bytes().map(u64::from).sum::<u64>());
    case!("par_lines", text.par_lines().collect::<Vec<_>>());
    case!("par_split_whitespace", text.par_split_whitespace().collect::<Vec<_>>());
    let mut bridged: Vec<u64> = v.iter().copied().par_bridge().map(|x| x * 2).collect();
    bridged.sort();
    case!("par_bridge", bridged);

    // Maps and sets.
    let hm: HashMap<u64, u64> = v.iter().map(|&x| (x * 31 + 7, x)).collect();
    // Each map has its own random hasher: compare with its own sequential order.
    case!("hashmap par_iter", hm.par_iter().map(|(k, v)| k ^ v).collect::<Vec<_>>() == hm.iter().map(|(k, v)| k ^ v).collect::<Vec<_>>());
    case!("hashmap sum", hm.par_iter().map(|(_, v)| v).sum::<u64>());
    let hs: std::collections::HashSet<u64> = v.iter().copied().collect();
    case!("hashset par_iter", hs.par_iter().copied().collect::<Vec<_>>() == hs.iter().copied().collect::<Vec<_>>());
    let bm: BTreeMap<u64, usize> = v.iter().copied().zip(0..).collect();
    case!("btreemap par_iter", bm.par_iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
    let bs: std::collections::BTreeSet<u64> = v.iter().copied().collect();
    case!("btreeset par_iter", bs.par_iter().max());
    case!("btreeset into", bs.clone().into_par_iter().filter(|x| x % 3 == 0).collect::<Vec<_>>());
    case!("btreemap into", bm.clone().into_par_iter().map(|(k, v)| k + v as u64).collect::<Vec<_>>());
    case!("hashset into", hs.clone().into_par_iter().count());
    let mut hm2 = hm.clone();
    hm2.par_iter_mut().for_each(|(_, v)| *v += 1);
    case!("hashmap par_iter_mut", hm2.par_iter().map(|(_, v)| *v).sum::<u64>());
    let mut bm2 = bm.clone();
    bm2.par_iter_mut().for_each(|(k, v)| *v += *k as usize);
    case!("btreemap par_iter_mut", bm2);

    // Adapters.
    case!("map filter", v.par_iter().map(|x| x * 2).filter(|x| x % 3 == 0).collect::<Vec<_>>());
    case!("filter_map", v.par_iter().filter_map(|&x| (x > 500).then(|| x - 500)).collect::<Vec<_>>());
    case!("enumerate", v.par_iter().enumerate().filter(|(i, x)| *i as u64 == **x).count());
    case!("zip", v.par_iter().zip(words.par_iter()).map(|(a, w)| format!("{a}{w}")).collect::<Vec<_>>()[..20].to_vec());
    case!("chain", v.par_iter().take(10).chain(v.par_iter().skip(9990)).copied().collect::<Vec<_>>());
    case!("chain unindexed", v.par_iter().copied().filter(|&x| x < 100).chain(words.par_iter().map(|w| w.len() as u64).filter(|&n| n > 2)).collect::<Vec<_>>());
    case!("chain mixed", (v.par_iter().copied().chain(v.par_iter().copied().filter(|x| x % 2 == 0)).collect::<Vec<_>>(), v.par_iter().copied().filter(|x| x % 2 == 1).chain(0..100).collect::<Vec<_>>()));
    case!("chain indexed", (v.par_iter().chain(&v).zip(words.par_iter().chain(&words)).enumerate().skip(5990).map(|(i, (a, w))| format!("{i}{a}{w}")).collect::<Vec<_>>(), (0..10u32).into_par_iter().chain(5..7).rev().collect::<Vec<_>>(), v.par_iter().chain(&v).len()));
    case!("chain nested", (0..100u32).into_par_iter().chain(200..300).chain((400..500u32).into_par_iter().filter(|x| x % 3 == 0)).chain(Some(7)).map(|x| x * 2).collect::<Vec<_>>());
    case!("chain reduce find", ((0..5000u64).into_par_iter().chain(v.par_iter().copied()).map(|x| (x, x, 1)).reduce_with(|a, b| (a.0, b.1, a.2 + b.2)), (0..5000u64).into_par_iter().filter(|x| x % 2 == 0).chain(v.par_iter().copied()).find_first(|&x| x > 4997)));
    case!("cloned", words.par_iter().cloned().collect::<Vec<String>>().len());
    case!("copied", v.par_iter().copied().reduce(|| 0, |a, b| a.max(b)));
    let seen = AtomicUsize::new(0);
    let s: u64 = v.par_iter().inspect(|_| { seen.fetch_add(1, Relaxed); }).sum();
    case!("inspect", (s, seen.load(Relaxed)));
    case!("take skip", v.par_iter().skip(100).take(50).collect::<Vec<_>>());
    case!("step_by", v.par_iter().step_by(37).collect::<Vec<_>>());
    case!("chunks", v.par_iter().chunks(333).map(|c| c.len() * 1000 + c.iter().copied().sum::<u64>() as usize).collect::<Vec<_>>());
    case!("rev", v.par_iter().rev().take(30).collect::<Vec<_>>());
    case!("flat_map", (0..50u32).into_par_iter().flat_map(|i| (0..i).into_par_iter().map(move |j| i * j)).collect::<Vec<_>>());
    case!("flat_map_iter", (0..50u32).into_par_iter().flat_map_iter(|i| (0..i).map(move |j| i + j)).collect::<Vec<_>>());
    case!("flatten", vec![vec![1, 2], vec![], vec![3]].into_par_iter().flatten().collect::<Vec<i32>>());
    case!("map_init", v.par_iter().map_init(|| 7u64, |s, &x| x * *s).sum::<u64>());
    let (tx, rx) = mpsc::channel();
    v.par_iter().take(100).for_each_with(tx, |tx, &x| tx.send(x).unwrap());
    let mut got: Vec<u64> = rx.iter().collect();
    got.sort();
    case!("for_each_with", got);
    case!("map_with", v.par_iter().map_with(3u64, |s, &x| x + *s).collect::<Vec<_>>());
    case!("map_init indexed", v.par_iter().map_init(|| 0u64, |n, &x| { *n += 1; x + 1 }).enumerate().map(|(i, x)| i as u64 * x).collect::<Vec<_>>());
    case!("map_with zip", v.par_iter().map_with(5u64, |s, &x| x * *s).zip(v.par_iter().rev()).map(|(a, b)| a ^ b).collect::<Vec<_>>());
    case!("with_min_len", v.par_iter().with_min_len(1000).map(|x| x % 10).sum::<u64>());
    case!("with_max_len", v.par_iter().with_max_len(3).map(|x| x % 10).collect::<Vec<_>>());
    case!("panic_fuse", v.par_iter().panic_fuse().count());

    // Consumers.
    let count = AtomicUsize::new(0);
    v.par_iter().for_each(|_| { count.fetch_add(1, Relaxed); });
    case!("for_each", count.load(Relaxed));
    let count = AtomicUsize::new(0);
    v.par_iter().for_each_init(|| 1usize, |k, _| { count.fetch_add(*k, Relaxed); });
    case!("for_each_init", count.load(Relaxed));
    case!("try_for_each ok", v.par_iter().try_for_each(|&x| if x < 1000 { Ok(()) } else { Err(x) }));
    case!("try_for_each err", (0..100u32).into_par_iter().try_for_each(|x| if x == 42 { Err(x) } else { Ok(()) }));
    case!("try_for_each option", (0..100u32).into_par_iter().try_for_each(|x| (x < 100).then_some(())));
    case!("sum f64", v.par_iter().map(|&x| x as f64 * 0.5).sum::<f64>());
    case!("product", (1..20u64).into_par_iter().product::<u64>());
    case!("reduce concat", words.par_iter().cloned().reduce(String::new, |a, b| a + &b));
    case!("reduce_with", words.par_iter().cloned().reduce_with(|a, b| a + &b).map(|s| s.len()));
    case!("reduce_with empty", (0..0u8).into_par_iter().reduce_with(|a, b| a + b));
    case!("try_reduce ok", v.par_iter().map(|&x| Some(x)).try_reduce(|| 0, |a, b| a.checked_add(b)));
    case!("try_reduce err", (0..100i32).into_par_iter().map(|x| if x == 50 { Err("fifty") } else { Ok(x) }).try_reduce(|| 0, |a, b| Ok(a + b)));
    case!("fold", words.par_iter().fold(String::new, |a, b| a + b).reduce(String::new, |a, b| a + &b));
    case!("fold sum", v.par_iter().fold(|| 0u64, |a, &b| a + b).sum::<u64>());
    case!("count", v.par_iter().filter(|&&x| x > 900).count());
    case!("min max", (v.par_iter().min(), v.par_iter().max()));
    let pairs: Vec<(u64, usize)> = v.iter().copied().zip(0..).collect();
    case!("min_by max_by", (pairs.par_iter().min_by(|a, b| a.0.cmp(&b.0)), pairs.par_iter().max_by(|a, b| a.0.cmp(&b.0))));
    case!("min_by_key max_by_key", (pairs.par_iter().min_by_key(|p| p.0 % 10), pairs.par_iter().max_by_key(|p| p.0 % 10)));
    case!("any all", (v.par_iter().any(|&x| x == 999), v.par_iter().all(|&x| x < 1000), v.par_iter().any(|&x| x > 1000)));
    case!("find_any", v.par_iter().find_any(|&&x| x == 777).map(|&x| x == 777));
    case!("find_first", pairs.par_iter().find_first(|p| p.0 == 777));
    case!("position_any", (0..1000u32).into_par_iter().position_any(|x| x == 321));
    case!("collect vec", v.par_iter().map(|x| x / 2).collect::<Vec<_>>());
    case!("collect string", words.par_iter().map(|w| w.as_str()).collect::<String>());
    let hm: HashMap<u64, usize> = pairs.par_iter().map(|&(a, b)| (b as u64, a as usize)).collect();
    let mut hm: Vec<_> = hm.into_iter().collect();
    hm.sort();
    case!("collect hashmap", hm);
    case!("collect btreemap", pairs.par_iter().copied().collect::<BTreeMap<u64, usize>>());
    case!("collect result ok", v.par_iter().map(|&x| Ok::<u64, String>(x)).collect::<Result<Vec<_>, _>>());
    case!("collect result err", (0..100u32).into_par_iter().map(|x| if x == 60 { Err(x) } else { Ok(x) }).collect::<Result<Vec<_>, _>>());
    case!("collect option", (0..100u32).into_par_iter().map(|x| x.checked_sub(0)).collect::<Option<Vec<_>>>());
    case!("collect option none", (0..100u32).into_par_iter().map(|x| x.checked_sub(1)).collect::<Option<Vec<_>>>());
    let mut target = vec![1, 2, 3];
    v.par_iter().copied().collect_into_vec(&mut target);
    case!("collect_into_vec", target);
    let (a, b): (Vec<u64>, Vec<usize>) = pairs.par_iter().copied().unzip();
    case!("unzip", (a, b));
    let (even, odd): (Vec<u64>, Vec<u64>) = v.par_iter().partition(|&&x| x % 2 == 0);
    case!("partition", (even, odd));
    let mut ext = vec![0u64];
    ext.par_extend(v.par_iter().map(|x| x + 1));
    case!("par_extend", ext);

    // Less common methods.
    case!("fold_with", v.par_iter().fold_with(String::from("<"), |a, b| a + &b.to_string()).reduce(String::new, |a, b| a + &b).replace('<', "").len());
    case!("update", v.par_iter().copied().update(|x| *x += 1).take(8).collect::<Vec<_>>());
    case!("find_map_first", v.par_iter().find_map_first(|&x| (x > 990).then(|| x * 2)));
    case!("find_map_last", v.par_iter().find_map_last(|&x| (x < 5).then(|| x + 1)));
    case!("find_map_any", v.par_iter().find_map_any(|&x| (x == 7).then_some(x)));
    case!("position_first/last", (v.par_iter().position_first(|&x| x == 500), v.par_iter().position_last(|&x| x == 500)));
    case!("positions", v.par_iter().positions(|&x| x % 97 == 0).collect::<Vec<_>>());
    let count = AtomicUsize::new(0);
    let r: Result<(), u64> = v.par_iter().try_for_each_init(|| 1, |k, &x| { count.fetch_add(*k, Relaxed); if x < 2000 { Ok(()) } else { Err(x) } });
    case!("try_for_each_init", (r, count.load(Relaxed)));
    case!("try_for_each_with", (0..50u32).into_par_iter().try_for_each_with(10u32, |k, x| if x < *k + 40 { Some(()) } else { None }));

    // Adapters and consumers added with the second round.
    case!("while_some all", (0..1000u32).into_par_iter().map(Some).while_some().collect::<Vec<_>>());
    case!("while_some stops", (0..1000u32).into_par_iter().map(|x| (x < 600).then_some(x)).while_some().collect::<Vec<_>>().iter().all(|&x| x < 600));
    let (small, big): (Vec<u64>, Vec<String>) = v.par_iter().partition_map(|&x| if x < 300 { Either::Left(x) } else { Either::Right(x.to_string()) });
    case!("partition_map", (small, big));
    let (l, r): (Vec<u32>, std::collections::BTreeSet<u32>) = (0..100u32).into_par_iter().partition_map(|x| if x % 3 == 0 { Either::Left(x) } else { Either::Right(x % 10) });
    case!("partition_map set", (l, r));
    case!("intersperse", v.par_iter().copied().take(60).intersperse(7777).collect::<Vec<_>>());
    case!("intersperse unindexed", (0..2000u32).into_par_iter().filter(|x| x % 7 == 3).intersperse(1).collect::<Vec<_>>());
    case!("intersperse indexed", (v.par_iter().copied().intersperse(1).len(), v.par_iter().copied().intersperse(1).rev().enumerate().skip(19_900).collect::<Vec<_>>()));
    case!("intersperse indexed zip", words.par_iter().map(String::as_str).intersperse("-").zip(v.par_iter().intersperse(&0)).skip(5990).collect::<Vec<_>>());
    let mut target = Vec::new();
    (0..7u32).into_par_iter().intersperse(100).collect_into_vec(&mut target);
    case!("intersperse collect_into_vec", (target, (0..1u32).into_par_iter().intersperse(9).len(), (0..0u32).into_par_iter().intersperse(9).len()));
    case!("intersperse empty", (0..0u8).into_par_iter().intersperse(1).collect::<Vec<_>>());
    let any = (0..1000u32).into_par_iter().filter(|x| x % 2 == 0).take_any(17).collect::<Vec<_>>();
    case!("take_any", (any.len(), any.windows(2).all(|w| w[0] < w[1]), any.iter().all(|x| x % 2 == 0)));
    let any = (0..1000u32).into_par_iter().filter(|x| x % 2 == 0).skip_any(17).collect::<Vec<_>>();
    case!("skip_any", (any.len(), any.windows(2).all(|w| w[0] < w[1])));
    let any = (0..1000u32).into_par_iter().take_any_while(|&x| x < 500).collect::<Vec<_>>();
    case!("take_any_while", (any.len() <= 500, any.windows(2).all(|w| w[0] < w[1]), any.iter().all(|&x| x < 500)));
    let any = (0..1000u32).into_par_iter().skip_any_while(|&x| x < 500).collect::<Vec<_>>();
    case!("skip_any_while", (any.len() >= 500, any.windows(2).all(|w| w[0] < w[1]), (500..1000).all(|x| any.contains(&x))));
    case!("collect_vec_list", (0..=100u32).into_par_iter().filter(|x| x % 2 == 0).flat_map(|x| 0..x).collect_vec_list().into_iter().flatten().collect::<Vec<_>>());
    case!("try_reduce_with ok", v.par_iter().map(|&x| Some(x)).try_reduce_with(|a, b| a.checked_add(b)));
    case!("try_reduce_with err", (0..100i32).into_par_iter().map(|x| if x == 50 { Err("fifty") } else { Ok(x) }).try_reduce_with(|a, b| Ok(a.max(b))));
    case!("try_reduce_with empty", (0..0u8).into_par_iter().map(Some).try_reduce_with(|a, b| a.checked_add(b)));
    case!("try_fold", v.par_iter().try_fold(|| 0u64, |a, &x| a.checked_add(x)).try_reduce(|| 0, |a, b| a.checked_add(b)));
    case!("try_fold err", (0..1000u32).into_par_iter().try_fold(|| 0u32, |a, x| if x == 700 { Err(x) } else { Ok(a + x) }).collect::<Vec<_>>().into_iter().find(|r| r.is_err()));
    case!("try_fold_with", words.par_iter().try_fold_with(String::new(), |a, w| Some(a + w)).map(|s| s.map(|s| s.len())).try_reduce(|| 0, |a, b| Some(a + b)));
    case!("zip_eq", v.par_iter().zip_eq((0..10_000u32).into_par_iter().rev()).map(|(a, b)| a * b as u64).collect::<Vec<_>>());
    let short: Vec<u64> = (0..37).collect();
    case!("interleave", v.par_iter().copied().take(100).interleave(short.par_iter().copied()).collect::<Vec<_>>());
    case!("interleave other longer", short.par_iter().copied().interleave(v.par_iter().copied().take(100)).collect::<Vec<_>>());
    case!("interleave rev", v.par_iter().copied().take(10).interleave(short.par_iter().copied()).rev().collect::<Vec<_>>());
    case!("interleave_shortest", v.par_iter().copied().take(100).interleave_shortest(short.par_iter().copied()).collect::<Vec<_>>());
    case!("interleave_shortest other longer", short.par_iter().copied().interleave_shortest(v.par_iter().copied().take(100)).collect::<Vec<_>>());
    case!("interleave_shortest equal", short.par_iter().interleave_shortest(short.par_iter()).count());
    case!("fold_chunks", v.par_iter().fold_chunks(7, || 0u64, |a, &x| a * 3 + x).collect::<Vec<_>>());
    case!("fold_chunks_with", words.par_iter().fold_chunks_with(11, String::from("|"), |a, w| a + w).collect::<Vec<_>>()[..5].to_vec());
    let w2: Vec<u64> = v.iter().map(|x| x + (x == &v[5000]) as u64).collect();
    case!("cmp", (v.par_iter().cmp(&v), v.par_iter().cmp(&w2), w2.par_iter().cmp(&v), v.par_iter().cmp(&v[..9999]), v[..10].par_iter().cmp(&v)));
    let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let mut g = f.clone();
    g[77] = f64::NAN;
    case!("partial_cmp", (f.par_iter().partial_cmp(&f), f.par_iter().partial_cmp(&g), f[..50].par_iter().partial_cmp(&g)));
    case!("eq ne", (v.par_iter().eq(&v), v.par_iter().eq(&w2), v.par_iter().ne(&w2), v.par_iter().eq(&v[1..]), f.par_iter().eq(&g)));
    case!("lt le gt ge", (v.par_iter().lt(&w2), v.par_iter().le(&v), v.par_iter().gt(&w2), w2.par_iter().ge(&v), v[..5].par_iter().lt(&v)));
    let (mut a, mut b) = (vec![9u64; 3], vec![String::new()]);
    pairs.par_iter().map(|&(x, i)| (x, i.to_string())).unzip_into_vecs(&mut a, &mut b);
    case!("unzip_into_vecs", (a, b));
    case!("by_exponential_blocks", (0..10_000u32).into_par_iter().by_exponential_blocks().find_first(|&e| e == 4_999));
    case!("by_uniform_blocks", (0u32..100_000).into_par_iter().by_uniform_blocks(7000).fold(Vec::new, |mut v, e| { v.push(e); v }).reduce(Vec::new, |mut a, mut b| { a.append(&mut b); a }) == (0..100_000).collect::<Vec<u32>>());
    case!("find_last", pairs.par_iter().find_last(|p| p.0 == 777));
    case!("min_by_key ties", pairs.par_iter().min_by_key(|p| p.0 / 100));

    // Strings and slices cut where their items say.
    case!("par_char_indices", text.par_char_indices().filter(|(_, c)| !c.is_ascii()).collect::<Vec<_>>());
    case!("par_encode_utf16", text.par_encode_utf16().map(u64::from).sum::<u64>());
    case!("par_split_ascii_whitespace", text.par_split_ascii_whitespace().collect::<Vec<_>>());
    let csv = "a,b,,c,dö,,,e,".repeat(40);
    case!("str par_split", csv.par_split(',').collect::<Vec<_>>());
    case!("str par_split chars", text.par_split(['o', 'ö']).collect::<Vec<_>>());
    case!("str par_split fn", text.par_split(|c: char| c.is_whitespace()).collect::<Vec<_>>());
    case!("str par_split empty", "".par_split(',').collect::<Vec<_>>());
    case!("str par_split_inclusive", csv.par_split_inclusive(',').collect::<Vec<_>>());
    case!("str par_split_terminator", csv.par_split_terminator(',').collect::<Vec<_>>());
    case!("str par_split_terminator slice", text.par_split_terminator(&['\n', 'e'][..]).collect::<Vec<_>>());
    case!("par_matches", csv.par_matches(&[',', 'ö']).collect::<String>());
    case!("par_match_indices", text.par_match_indices('o').collect::<Vec<_>>());
    let bytes: Vec<u8> = csv.bytes().collect();
    case!("slice par_split", bytes.par_split(|&b| b == b',').map(|p| p.len()).collect::<Vec<_>>());
    case!("slice par_split_inclusive", bytes.par_split_inclusive(|&b| b == b',').map(|p| p.to_vec()).collect::<Vec<_>>());
    let mut m = bytes.clone();
    m.par_split_mut(|&b| b == b',').for_each(|p| p.reverse());
    case!("slice par_split_mut", m);
    let mut m = bytes.clone();
    m.par_split_inclusive_mut(|&b| b == b',').for_each(|p| p.rotate_left(1.min(p.len())));
    case!("slice par_split_inclusive_mut", m);
    let runs: Vec<u64> = v.iter().map(|x| x / 300).collect();
    case!("par_chunk_by", runs.par_chunk_by(|a, b| a == b).map(|c| (c[0], c.len())).collect::<Vec<_>>());
    let mut m = runs.clone();
    m.par_chunk_by_mut(|a, b| a <= b).for_each(|c| c.reverse());
    case!("par_chunk_by_mut", m);
    case!("par_rchunks", v.par_rchunks(7).map(|c| c[0]).collect::<Vec<_>>());
    case!("par_rchunks_exact", (v.par_rchunks_exact(7).map(|c| c.iter().sum::<u64>()).collect::<Vec<_>>(), v.par_rchunks_exact(7).remainder().to_vec()));
    let mut m = v.clone();
    m.par_rchunks_mut(9).for_each(|c| c[0] = 0);
    case!("par_rchunks_mut", m);
    let mut m = v.clone();
    m.par_rchunks_exact_mut(9).enumerate().for_each(|(i, c)| c[0] = i as u64);
    case!("par_rchunks_exact_mut", m);
    let mut s7 = pairs.clone();
    s7.par_sort_by_cached_key(|p| (p.0 % 17).to_string());
    case!("par_sort_by_cached_key", s7);

    // Drains and the other std sources.
    let mut m = words.clone();
    let drained: Vec<String> = m.par_drain(100..2900).map(|w| w + "!").collect();
    case!("vec par_drain", (drained, m));
    let mut m = v.clone();
    let n = m.par_drain(..).filter(|x| x % 3 == 0).count();
    case!("vec par_drain all", (n, m.len(), m.capacity() >= 10_000));
    let mut m = v.clone();
    drop(m.par_drain(5..=10));
    case!("vec par_drain dropped", m.len());
    let mut d: VecDeque<u64> = v.iter().copied().collect();
    case!("vecdeque par_drain", (d.par_drain(9000..).sum::<u64>(), d.len()));
    let mut st = text.clone();
    case!("string par_drain", (st.par_drain(10..40).collect::<String>(), st.len()));
    let mut hm = (0..100u32).map(|i| (i, i * i)).collect::<HashMap<_, _>>();
    case!("hashmap par_drain", (hm.par_drain().map(|(_, v)| v as u64).sum::<u64>(), hm.len()));
    let mut hs: std::collections::HashSet<u64> = v.iter().copied().collect();
    case!("hashset par_drain", (hs.par_drain().max(), hs.is_empty()));
    let mut heap: std::collections::BinaryHeap<u64> = v.iter().copied().collect();
    case!("binaryheap ref", heap.par_iter().sum::<u64>());
    case!("binaryheap par_drain", (heap.par_drain().min(), heap.len()));
    let heap: std::collections::BinaryHeap<u64> = v.iter().copied().collect();
    case!("binaryheap into", heap.into_par_iter().max());
    let mut list: std::collections::LinkedList<u64> = v.iter().copied().collect();
    case!("linkedlist ref", list.par_iter().copied().collect::<Vec<u64>>());
    list.par_iter_mut().for_each(|x| *x += 1);
    case!("linkedlist mut and into", list.into_par_iter().collect::<Vec<_>>());
    let ok: Result<u32, String> = Ok(5);
    let err: Result<u32, String> = Err("no".into());
    case!("result", (ok.par_iter().count(), err.par_iter().count(), ok.clone().into_par_iter().sum::<u32>()));

    // Free sources: trees, splitters, single values.
    let kids = |&n: &u32| (4 * n + 1..4 * n + 1 + (n + 1) % 4).filter(|&c| c < 30_000).collect::<Vec<_>>();
    case!("walk_tree_prefix", iter::walk_tree_prefix(0u32, kids).collect::<Vec<_>>());
    case!("walk_tree_postfix", iter::walk_tree_postfix(0u32, kids).map(|n| n * 2).collect::<Vec<_>>());
    case!("walk_tree_prefix find_first", iter::walk_tree_prefix(0u32, kids).find_first(|n| n % 1000 == 999));
    let mut any: Vec<u32> = iter::walk_tree(0u32, kids).collect();
    any.sort();
    case!("walk_tree", any);
    case!("walk_tree_postfix refs", iter::walk_tree_postfix(&v[..], |s: &&[u64]| if s.len() > 7 { let (a, b) = s.split_at(s.len() / 3); vec![a, b] } else { vec![] }).map(|s| s.len()).collect::<Vec<_>>());
    let halve = |r: std::ops::Range<u32>| if r.len() < 100 { (r, None) } else { let m = r.start + r.len() as u32 / 2; (r.start..m, Some(m..r.end)) };
    case!("split", iter::split(0..50_000u32, halve).flat_map_iter(|r| r.map(|x| x ^ 5)).collect::<Vec<_>>());
    case!("split sum", iter::split(0..50_000u32, halve).map(|r| r.len()).sum::<usize>());
    case!("split whole", iter::split(0..50u32, halve).collect::<Vec<_>>());
    case!("repeat take", iter::repeat(3u64).take(1000).sum::<u64>());
    case!("repeat zip", iter::repeat("a").zip(words.par_iter()).map(|(a, w)| format!("{a}{w}")).collect::<Vec<_>>()[2990..].to_vec());
    case!("repeat take_any", iter::repeat(5u8).take_any(300).collect::<Vec<_>>());
    case!("repeat find_any", iter::repeat(7u32).map(|x| x * 6).find_any(|&x| x == 42));
    case!("repeat_n", iter::repeat_n(String::from("ab"), 500).rev().enumerate().map(|(i, s)| s.len() + i).collect::<Vec<_>>());
    case!("once empty", (iter::once(5).chain(iter::empty()).collect::<Vec<i32>>(), iter::once(1u8).len(), iter::empty::<u8>().len(), iter::once(3).zip(iter::once('c')).collect::<Vec<_>>()));

    // Ranges of chars and of 128-bit integers, array windows.
    case!("char range", ('\u{D700}'..'\u{E100}').into_par_iter().collect::<String>());
    case!("char range len rev", (('\u{D7FE}'..'\u{E002}').into_par_iter().len(), ('\u{D7FE}'..='\u{E001}').into_par_iter().rev().collect::<Vec<_>>()));
    case!("char range incl", ('a'..='z').into_par_iter().zip(0..26u8).filter(|(_, i)| i % 3 == 0).collect::<Vec<_>>());
    case!("char range all", (('\0'..=char::MAX).into_par_iter().len(), ('\0'..=char::MAX).into_par_iter().step_by(997).map(|c| c as u64).sum::<u64>()));
    case!("char range empty", (('b'..'a').into_par_iter().len(), ('b'..='a').into_par_iter().count(), ('x'..'x').into_par_iter().collect::<String>()));
    case!("u128 range", (0..3000u128).into_par_iter().map(|x| (x * x) << 64).sum::<u128>());
    case!("i128 range incl", (i128::MAX - 2000..=i128::MAX).into_par_iter().filter(|x| x % 7 == 0).collect::<Vec<_>>());
    let (nine, five) = (9i128, 5i128);
    case!("u128 range opt_len", ((0..u128::MAX).into_par_iter().opt_len(), (i128::MIN..=i128::MAX).into_par_iter().opt_len(), (5..=9u128).into_par_iter().opt_len(), (nine..five).into_par_iter().count()));
    case!("u128 huge take_any", (i128::MIN..=i128::MAX).into_par_iter().take_any(300).count());
    case!("par_array_windows", v.par_array_windows::<3>().filter(|w| w[0] < w[1] && w[1] < w[2]).count());
    case!("par_array_windows rev", (v.par_array_windows::<2>().rev().take(5).collect::<Vec<_>>(), v[..3].par_array_windows::<4>().len(), v[..4].par_array_windows::<4>().collect::<Vec<_>>()));

    // Tuples zipped (MultiZip).
    let fl: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    case!("multizip owned", (v.clone(), words.clone(), 0..5000u32).into_par_iter().map(|(a, w, i)| format!("{a}{w}{i}")).collect::<Vec<_>>()[..30].to_vec());
    case!("multizip refs", (&v, &words, &fl).into_par_iter().filter(|(a, _, f)| **a as f64 == **f).map(|(a, w, _)| a + w.len() as u64).collect::<Vec<_>>());
    let mut m1 = v.clone();
    let mut m2 = fl.clone();
    (&mut m1, &mut m2).into_par_iter().for_each(|(a, f)| { *a += 1; *f *= 2.0; });
    case!("multizip mut", (m1, m2.iter().sum::<f64>()));
    case!("multizip one", (v.par_iter(),).into_par_iter().map(|(a,)| a).sum::<u64>());
    case!("multizip twelve", (0..100u8, 1..101u16, 2..102u32, 3..103u32, 4..104usize, 5..105i8, 6..106i16, 7..107i32, 8..108i32, 9..109isize, v.par_iter(), words.par_iter()).into_par_iter().rev().map(|t| format!("{t:?}")).collect::<Vec<_>>()[..3].to_vec());
    case!("multizip indexed", (v.par_iter(), words.par_iter().rev()).into_par_iter().enumerate().skip(2990).map(|(i, (a, w))| format!("{i}{a}{w}")).collect::<Vec<_>>());
    let mut dst = vec![0u64; 7];
    (v.par_iter(), &mut dst[..]).into_par_iter().for_each(|(a, o)| *o = *a);
    case!("multizip into slice", dst);

    // Sorts.
    let mut s1 = v.clone();
    s1.par_sort();
    case!("par_sort", s1);
    let mut s2 = pairs.clone();
    s2.par_sort_by(|a, b| b.0.cmp(&a.0));
    case!("par_sort_by (stable)", s2);
    let mut s3 = pairs.clone();
    s3.par_sort_by_key(|p| p.0 % 13);
    case!("par_sort_by_key (stable)", s3);
    let mut s4 = v.clone();
    s4.par_sort_unstable();
    case!("par_sort_unstable", s4);
    let mut s5 = v.clone();
    s5.par_sort_unstable_by(|a, b| b.cmp(a));
    case!("par_sort_unstable_by", s5);
    let mut s6 = v.clone();
    s6.par_sort_unstable_by_key(|x| x % 100);
    case!("par_sort_unstable_by_key", s6.iter().map(|x| x % 100).collect::<Vec<_>>());
    out
}
