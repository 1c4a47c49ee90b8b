// The policy engine: hotpage's decision loop, shared by `hotpage attach`
// (live process, move_pages) and `hotpage simulate` (replayed trace,
// simulated memory). Both feed it samples and ask it for rounds; only the
// MemoryView differs, so the two make the same decisions on the same sample
// stream and the same memory state (tools/engine_equivalence_test.cc).
//
// One round (RunRound):
//   1. one read of the table learns the tracked keys (every live entry,
//      HotnessTable::ReadSlots); their nodes are queried from the view (at
//      most max_placement_pages_per_round 4 KiB pages, in table order,
//      placement_query_batch_pages per call; the rest are "unknown" for the
//      round);
//   2. the scanner's pass over the entries read (HotnessScanner::Pass)
//      sorts them into the hottest-not-fast, coldest-on-fast
//      (and, for --locality, hottest-on-fast) lists; a victim's upper rate
//      bound is also capped by the time since its last sample (zero samples
//      in that gap: U(0) * period / gap), so a page that was hot and stopped
//      can be displaced before its decayed count fades (tested in
//      engine_test StoppedHotPagesAreDisplacedByRecentlyHotOnes);
//   3. DecideMoves (policy/placement.h) with the view's per-range policies,
//      free memory, back-off and holds;
//   4. every `epoch_rounds` intervals of time the table's counts halve
//      (AdvanceEpoch), after the round saw them at full weight;
//   5. the view's THP-backed 2 MiB chunks are learned: samples in them feed
//      one 2 MiB entry from then on (a huge page moves whole).
// The caller carries the moves out (attach: the Migrator; simulate: its
// simulated memory).
//
// Two windows of evidence. The decayed count (window W = t + L, 2-4 s at
// the defaults) is the long view; it ranks steady pages well but makes a
// page that just turned hot wait for several samples, because its rate is
// averaged over W. So each round also takes the short view: the samples a
// page got since the previous round (the count now less the previous
// round's count, halved by the epochs between; exact but for integer
// halving), over the time since that round. A candidate's lower bound is
// the larger of the two windows' lower bounds, each a valid bound at the
// scan's z (a union bound: the pointless-swap probability at most doubles).
// A page cold for long and now sampled twice within a second gets a short
// lower bound of L(2) * P / 1 s = 0.5 P/s (z = 1.163), above the recency
// bound U(0) * P / gap = 2.1 P / gap of a fast-tier page not sampled for
// gap > 4.2 s; the long window alone needed about 5 samples (ARMS keeps a
// short and a long moving average for the same reason).
//
// A candidate that stopped. The victims' upper bounds are capped by their
// silence since their last sample (the recency bound, step 2 above); the
// candidates' lower bounds were not, and a page hot for a moment and then
// silent kept a lower bound from its decayed count for epochs: at xz's
// start (tests/traces/xz_mixed.hpt) 60 samples in 0.1 s of set-up gave
// pages silent since a lower bound of 50/s at the 1 s round, against the
// U(0) * P / 0.9 s = 2.3/s their silence allows, and 21 of that round's 33
// promotions (8 of the next round's 14) were such pages, displacing pages
// of the working set; none of them was sampled again. The silence bounds a
// candidate's current rate as it bounds a victim's, so a candidate's lower
// bounds (the decayed count's or the short window's, and the count
// prior's) and its point estimate are capped by it where they exceed it (a
// rate that held over the window would not fall silent so long), and its
// count takes no part in the prior's pair test; the long prior's bound
// already needs the recent upper bound to admit it ("A prior on the long
// window"). A page sampled steadily is untouched: its silence is a gap
// between samples, and U(0) over it is above what its counts bound.
// xz_mixed 1:2 / 1:4 / 1:8 82.0 / 76.2 / 68.8 -> 83.0 / 77.7 / 71.1% of
// the oracle, sort_lines 1:4 / 1:8 +0.9 / +1.0 (tools/simulate/README.md).
// Counted in EngineCounters::stopped_candidates. Tested in engine_test
// AStoppedPageIsNoCandidate.
//
// A prior fitted to the table (policy/count_prior.h). With about one
// sample per page per second the decayed count gives each page 2-4
// samples, and one page's Poisson interval cannot tell 3 samples from 0
// (L(3) = 1.2 < U(0) = 2.1 at z = 1.163). The table's counts as a whole can:
// each round an empirical-Bayes prior on the per-window mean is fitted to
// the histogram of every tracked key's count (a nonparametric
// maximum-likelihood prior, by EM), and every candidate gets its posterior
// lower bound (PageHeat::prior_lo), every victim its posterior upper bound
// (prior_hi), at the same tail as the Poisson limits. Placement swaps when
// either model separates the pair (lo > hi of the Poisson bounds, with the
// short window and the recency bound, or of the posterior's), never by
// mixing the two: a page's one sample in a quarter-second short window
// against a victim the prior calls cold is no evidence under either model
// (tried: mixing them churned, scan_cold at 1:4 fell from 64% to 24% of
// the oracle). Nothing in it is set per trace: the prior is the counts',
// the tail is z's. Tested in engine_test
// PriorFittedToTheCountsPromotesWhatPoissonCannot. Each prior also gives
// the swap test its pair form (EngineOptions::pair_test; PageHeat::
// prior_count and long_prior_count; policy/count_prior.h, "The pair
// test"): a pair whose intervals overlap but whose joint posterior puts at
// most the one-sided tail a on the candidate not being hotter swaps
// (tuning 75.7 -> 75.9, +3.0 over colloid; tools/simulate/README.md).
// A histogram with no zeros to show. A page enters the table with its first
// sample, so until the table first halves its counts (the first epoch, 2 s
// at the defaults) no tracked page has a count of 0, however cold it is,
// and the pages not sampled yet are not in the histogram at all. Fitted as
// the whole population, the prior explained the missing zeros with rates
// that give few, and blurred the groups: on stream_mix 1:8 at 0.5 s a count
// of 1 (mostly hot-set and cold pages) had the posterior interval 1.5-2.2
// samples, like the streamed pages', and a count of 3 against one of 1 had
// P(not hotter) 0.51, so even the odds a saturated CXL allows (below) held
// the stream back while first touch had left it on CXL at its cap. In the
// first epoch, where samples count accesses and no change window has
// replaced the counts by samples since a change point (whose zeros are
// data), the prior is fitted zero-truncated (policy/count_prior.h: each
// count's likelihood over the probability of being seen at all): there a
// count of 3 against one of 1 is 0.16. The long window's prior is not: its
// exponentially weighted count is not Poisson, so the probability of a
// count of 0 has no such form. stream_mix 1:8 186.6 -> 184.3 ns, now below
// colloid's 184.5 (8 of its 80 rounds fitted so; its first second 247 ->
// 205 ns, colloid's 222, its second 204 -> 200); no other
// bundled row moved by more than 0.4 (sqlite_kv 1:4 +0.4, stream_mix 1:4
// 181.1 -> 181.4 ns, still the best); stream_mix 1:8 with seeds 21-24 and
// 41-44 -0.1 to -1.2 ns, six of the eight now below colloid (four before);
// variants: stream_mix_wide 1:4 187.5 -> 188.7 ns (still the best), nothing
// else by more than 0.3 (tools/simulate/README.md). Fitting the long prior
// so too cost memcached 1:8 1.2 points (its serving phase at 5 s, inside
// the long window's first 7 s without a rounded zero); fitting every
// histogram so, zeros left out, moved bytes up by 40% on zipf_kv and lost
// scan_cold 1.2-2.4. RoundReport::prior_zero_truncated, the round log's
// prior_zero_truncated. Tested in engine_test
// TheFirstEpochsPriorIsFittedZeroTruncated and count_prior_test
// ZeroTruncatedFitSeparatesWhatTheBlurredOneCannot.
//
// A long window for the victims. A hot page sampled about once a second
// often has a decayed count of 0 or 1, as does a cold page touched once:
// the decayed window cannot tell them apart, so the coldest-first order
// of the fast tier's pages (the victims of swaps and of watermark
// demotions) is mostly noise among its pages of count 0-1. Each round the
// engine therefore adds every key's samples since the previous round (the
// short window's difference, exact) to a long count weighted by
// exp(-age / tau), tau = long_window_ns = 10 s (ARMS' long moving
// average), over the effective window tau (1 - exp(-T / tau)) after T
// seconds of running. A victim's Poisson upper limit of that count, at
// the scan's z (conservative: the weighted count's variance is half its
// mean, as hotness/rate_stats.h argues for the decayed count), is
// PageHeat::long_hi, and placement ranks victims by the
// lower of it and rate_hi: a page with one sample in ten seconds is
// demoted before a hot page that drew none in the last two. The long
// window assumes the page's rate held over it, so a page whose recent
// point estimate exceeds its long upper limit (it heated up, e.g. just
// promoted after a shift) gets none. Only the order uses it: the swap and
// promotion tests keep their bounds (tried: also lowering the victims'
// rate_hi, which mixes the windows in the swap test, gained more on
// packages_2pkg 1:2, 85% of the oracle against 81.5%, but moved 40% more
// bytes on scan_cold and lost 1-2 points there; a separate long-window
// swap test, candidate against victim, gained nothing). The map holds at
// most one float per table slot; its upkeep is one pass per round.
// Tested in engine_test LongWindowDemotesTheColdPageFirst and
// LongWindowSkipsAPageThatHeatedUp, placement_test
// VictimsRankByTheLowerOfTheirUpperBounds.
//
// A prior on the long window. The long count separates what the decayed
// count cannot: at about one sample per page per second a hot page has
// 5-10 samples in the long window, a cold page just touched for the first
// time (first touch put it on the fast tier) has 1. But one page's Poisson
// interval still needs many samples (L(7) = 4.3 against U(1) = 3.4 at
// z = 1.163), while the table's long counts as a whole are clearly
// bimodal. So each round a second empirical-Bayes prior
// (policy/count_prior.h) is fitted to the histogram of every tracked key's
// long count (rounded; the lower bound takes the count rounded down, the
// upper bound rounded up), and gives candidates a posterior lower bound
// (PageHeat::long_prior_lo) and victims a posterior upper bound
// (long_prior_hi): a third model in the swap test, one model on both
// sides as before. The long window assumes the rate held over it, so the
// bounds are given only where the recent evidence does not contradict
// it: a candidate whose recent upper bound (the decayed count's, capped
// by the recency bound) is below its long lower bound is cooling (a scan
// that has passed, the old hot set after a shift) and gets none; a victim
// whose recent lower bound (the decayed count's or the short window's) is
// above its long upper bound has heated up (just became hot) and gets
// none. Victims rank by the lowest of rate_hi, long_hi and long_prior_hi
// (placement.cc ColderFirst). On packages_2pkg at 1:2 (a steady hot set
// slightly larger than the fast tier, cold pages still being touched for
// the first time) about 500 of the fast tier's 2965 pages were cold pages
// placed by first touch: the fast tier's coldest-first order put hot
// pages not sampled for a few seconds (recency bound) before them, and no
// model could prove a hot candidate (2-3 decayed samples) hotter than
// either; with the long prior the fast share went from 81.5% to 84.4% of
// the oracle. (Tried: without the guards, the previous attempt lost 1.4-
// 3.4 points on scan_cold; taking only the decayed count's lower bound
// for the victims' guard gained 1.2 more on packages_2pkg but lost 0.6 on
// gups_shift.) Tested in engine_test
// LongPriorSwapsOutAColdPageThatFirstTouchPlaced and
// LongPriorSkipsACoolingCandidate.
// A single sample shows no change of rate: the victims' guard takes the
// short window's lower bound only from two samples or more. A page first
// sampled in the last window has that sample as its whole long count, and
// one sample in an early round's 0.3 s window gave L(1) / 0.3 s, above
// the long prior's bound for a count of 1: a cold page just touched lost
// its prior bound, ranked by its decayed count's bound above hot pages not
// sampled for a few seconds, and watermark demotions took those hot pages
// first (packages_2pkg 1:2: 1372 hot pages of 4758 watermark demotions
// over the run, 846 of 4811 with the rule; 84.5% -> 85.7% of the oracle,
// 35.1 -> 31.0 MB moved; no row lost more than 0.2). Tested in engine_test
// OneSampleDoesNotShowAVictimHeatedUp.
// The long window ranks a victim unless the recent evidence contradicts
// it. The lowest of the bounds picks, for a hot page that drew no sample
// in the last two seconds, the decayed count's or the recency bound, both
// consistent with its long rate (at 0.73 samples/s a hot page has no
// sample in 2 s one time in four), and ranks it below a cold page first
// touched a second ago. So a victim whose recent upper bound (rate_hi,
// with the recency bound) is not below its long window's Poisson lower
// bound, i.e. that has not shown it cooled, ranks by its long-window bounds
// alone, and so do ties between such victims: the long prior's upper bound
// takes few values (its fitted support has two or three points), so most
// victims tie on it and the tie-break is the order (PageHeat::
// rank_by_long_window; placement.cc ColdKey and ColderFirst). Not while a
// change point that stood lies within the long window (above: the long
// window's premise, a rate that held over it, is what the change broke, and
// the old hot set's pages would rank hot for up to 10 s), and only where
// samples count accesses. With the confirmation above, on the tuning set:
// packages_2pkg 1:2 87.1 -> 88.4 (dram+cxl) and 86.9 -> 88.3 (2pkg+cxl),
// above memtis' 87.9; zipf_kv +0.9 to +1.0 with 20-33% fewer bytes
// (tools/simulate/README.md). A room round takes its victims' recency
// bounds again over the longer gap, which can show a victim cooled that the
// full round ranked by its long window. Tested in engine_test
// AVictimThatDrewNoSampleLatelyRanksByItsLongWindow,
// AVictimThatShowedItCooledKeepsItsRecentBound and
// ARoomRoundsLongerGapShowsAVictimCooled, and placement_test
// AVictimThatHasNotCooledRanksByItsLongWindow.
//
// Pages the table does not track. The victims of swaps and of watermark
// demotions come from the table (the scanner's coldest on the fast tier),
// and a page never sampled is in no list: a process's pages first touched
// on the fast tier and never used again (a load phase, a cache warmed and
// left; DAMON reports no idle region), or touched before hotpage attached,
// hold the tier, and a fast node short of its watermark demotes the
// tracked pages, its hot set, instead. With a source that samples every
// access to every tier (EngineOptions::sweep_untracked_fast: PEBS, IBS,
// DAMON) a page with no sample since the engine started has rate at most
// U(0) P / T over the T seconds it ran (the recency bound's form): below
// any page the table tracks. So once the engine has run a long window
// (10 s: before that a page sampled less often is not yet told from one
// never sampled, and at the start every page is untracked), each round
// that finds a fast node below its high watermark sweeps the process's ranges
// that numa_maps says hold pages on a fast node (MemoryView::Ranges, in address
// order from where the last sweep stopped), queries the nodes of their pages
// the table does not track (at most sweep_query_pages_per_round, in
// placement_query_batch_pages calls), and offers those on a fast node as
// victims, up to the scanner's list length; placement then ranks them
// first (ColderFirst). THP-backed chunks and hugetlbfs ranges are left to
// their samples (they move whole). Write faults see no reads, so an
// unsampled page there says nothing: no sweep. Hint faults see no page on
// the fast tier at all, so without the sweep a fast tier that first touch
// filled holds no victim and nothing is ever promoted; with it the sweep
// probes: an untracked page is demoted for a page that faulted, and if it
// was hot it faults back within a pass and is then kept ("A demotion a
// fault undoes", below). Measured in the simulator, which models the
// source and reports ranges for it (`hotpage simulate TRACE --ratio 1:N
// --source hintfault`, tools/simulate/README.md "Without a PMU, under
// pressure"): over the ten bundled traces at 1:2, 1:4 and 1:8 the sweep
// raised 19 of 30 rows (mean +11.2 points; e.g. gups_shift 1:4 35.4% ->
// 76.2%, scan_cold 13.0% -> 40.8%, sqlite_kv 15.4% -> 48.2%) and lowered
// 11, where first touch had already put the hot set on the fast tier and
// probing displaced some of it (stream_mix by 10-12 points, the others by
// 0.4-4.8). Its victims also go in watermark demotions ("Watermark
// demotions need a full view", below). The
// simulator's other sources do not sweep: a trace records no numa_maps,
// and every page it places was sampled (its table tracked every page on
// the fast tier, measured on five bundled traces). In the guests (no PMU)
// DAMON's regions average a hot cluster's accesses over its cold neighbours, so
// the cold pages of tests/attach attach_spill_vm_test are tracked with low
// counts and the sweep finds none there (untracked_victims 0): it matters
// for page-precise sources, and is tested in engine_test
// PagesNeverSampledOnAShortFastNodeAreDemotedFirst.
//
// Watermark demotions need a full view. A fast node below its low
// watermark demotes its coldest tracked pages to its high watermark
// (placement.h rule 0). With a page-fault source the tracked pages on the
// fast tier are the ones that faulted: written since a re-arm (write
// faults), or promoted by hotpage itself (hint faults, which no top-tier
// page takes). The pages the source cannot see (read-only, or never
// promoted) are untracked and never victims, so a watermark demotion takes
// the pages known to be in use and leaves the unknown ones. Measured in
// the simulator (`hotpage simulate tests/traces/zipf_kv.hpt --ratio 1:4
// --source writefault`, tools/simulate/sim_fault_source.h): the fast tier
// full from first touches, the rounds demoted 757 written pages and
// promoted none, 41.4% of accesses on the fast tier against 67.2% with no
// migration at all. So once the engine has ingested a page-fault sample
// (SampleSource::kPageFault) there are no watermark demotions; a promotion
// still displaces a victim it provably beats (both judged on the same
// source's evidence): 66.5% with 509 swaps. DAMON's regions cover every
// page and keep them. Pages the table does not track, which the sweep
// offers (hint faults), stay eligible: they are the unknown ones, and the
// kernel lets no promotion into a node below its own low watermark
// (tests/attach attach_spill_hintfault_vm_test, first touch having filled
// node 0 to it: with swaps alone 2435 promotions failed with ENOMEM and 10
// succeeded). So does a view that holds the process to a share
// (MemoryView::HoldsToAShare: the daemon's members): the shortage it
// reports is room the process must give back (tests/daemon
// daemon_vm_test's floors, with write faults). Tested in engine_test
// FaultSourcesMakeNoWatermarkDemotions.
//
// A demotion a fault undoes. A slow-tier-only source (hint faults) sees
// nothing of a page on the fast tier: a page it promoted draws no more
// samples there, its count decays, and it becomes the victim of the next
// page that faults, hot or lukewarm (a pass makes every page accessed
// since the last one fault once). If it was hot it faults back within a
// pass or two and returns: one page moved four times for nothing, over and
// over. That fault is the only evidence the source gives about a page on
// the fast tier, and it is decisive: the page was in use while the engine
// thought it cold. So with slow_tier_samples a page the engine demoted
// that faults within the long window (10 s) of its demotion is no victim
// for the next long window: swaps and watermark demotions pass it over,
// and it returns on its fault as any other page (PlaceArrivals, or a swap
// with a victim that has not proven itself). Measured in the simulator,
// which models the source (tools/simulate/sim_fault_source.h; `hotpage
// simulate TRACE --ratio 1:4 --policy all --first-touch-node 1 --source
// hintfault`, tools/simulate/README.md "Without a PMU, under pressure").
// Tested in engine_test ADemotionAFaultUndoesProtectsThePage.
//
// The kernel's LRU as the fast tier's evidence. Where the kernel demotes on
// reclaim (/sys/kernel/mm/numa/demotion_enabled, as tiered machines are
// commonly set up for the kernel's own tiering), the fast tier does have an
// observer of its own: reclaim's LRU, aged by accessed bits, which no
// userspace source here can read (Debian's 6.12 builds no idle page
// tracking). So with hint faults there (EngineOptions::reclaim_makes_room,
// which attach sets when demotion_enabled reads true at its start, and
// follows while it runs: SetReclaimMakesRoom, FollowKernelDemotion) the
// engine offers no victims and makes no watermark demotions; the sweep and
// "A demotion a fault undoes" have nothing to do. A candidate that finds
// no room is promoted into the full node anyway (PlacementInput::
// reclaim_makes_room, trigger kReclaim) if it faulted twice within the
// repeat window (PageHeat::repeated: its long count at least 1 + exp(-W /
// 10 s), the older fault within W, which is 10 s until pages come back:
// "The repeat window" below): one fault is one pass's touch, and promoting on
// it made every lukewarm page a candidate (zipf_kv 1:4: 41,759 promotions,
// 76,837 ping-pongs; the kernel's NUMA balancing asks for two consecutive
// faults from a node before it migrates, for the same reason). The
// allocation wakes the node's reclaim, which demotes the pages its LRU holds
// coldest. A page so promoted that faults again within the long window was
// demoted by that reclaim (the source sees no fast-tier page): the LRU held
// it colder than the rest of the tier, and no such promotion takes it for
// the next long window (reclaim_held_until_; counters reclaim_promotions,
// reclaim_returns). A second fault is placed as it arrives (PlaceArrivals,
// repeats_), as the kernel promotes in the fault: over the bundled rows
// below that took hotpage from 41 to 45 of 60 ahead of tpp (mean +7.6 ->
// +8.5 points; sort_lines +3.0 to +7.7) and on the variants from 55 to 54
// of 66 (mean +10.7 -> +12.2), losing 1-4 points on the bandwidth-bound
// stream rows. Measured in a 6.12 guest (tests/attach
// attach_spill_reclaim_vm_test: node 0 full from first touch, 7 of 16 hot
// clusters on node 1): the hot set reached 90% on node 0 in 6.2 s with 2511
// promotions left to reclaim and the kernel demoting 11,930 pages, against
// 23.4 s and 19,356 engine demotions by the sweep with the rule off (6.5 s
// with second faults placed as they arrive: the kernel's passes decide). The
// simulator models that reclaim (SimulatedMemoryOptions::reclaim_demotes,
// `hotpage simulate --source hintfault --kernel-demotion`, the tpp model's
// exact LRU): over the ten bundled traces at 1:2, 1:4 and 1:8, each with
// default first touch and with every page first on CXL, hotpage led the
// calibrated tpp model in 45 of 60 rows by fast-tier share (mean +8.5
// points) against 21 of 60 (mean -2.1) with the sweep, and on the
// variant traces, which no rule was developed on (score_table.py
// VARIANTS), in 54 of 66 (mean +12.2) against 33 (+1.8); 47 and 60 with
// the repeat window below (tools/simulate/README.md, "Without a PMU, under
// pressure"). Tested in
// engine_test TheKernelsReclaimMakesRoomForPagesThatFaultTwice and
// ASecondFaultIsLeftToReclaimAsItArrives.
// The repeat window follows the LRU's characteristic time. Two faults
// within 10 s admit every page touched in two scan passes 10 s apart, and
// a fast tier that keeps a page only T_C seconds without an access (the
// characteristic time of an LRU cache: Che, Tung and Wang, IEEE JSAC 2002;
// in steady state about the tier's pages over its reclaim's demotions per
// second) evicts the ones touched less often than that before their next
// touch: each comes back (a return), and a return costs two moves and
// displaces a page that would have stayed. A return is the measure of
// T_C the engine has: a page promoted at t_p, evicted after T_C without an
// access and faulting again at t_r has t_r - t_p at least T_C (its next
// touch after the eviction, and the next scan pass before the fault).
// So the window W in which two faults make a page `repeated` is the long
// window until a return is seen; a round whose returns' shortest age
// (promotion to return) is below W cuts W to it, never below
// kMinRepeatWindowNs (the kernel's shortest NUMA scan period, 1 s: a
// page faults at most once a pass, so a shorter window admits no page);
// a round with no return lets W grow back by the time since the last
// round, up to the long window. The fault-count bar is then 1 + exp(-W /
// long window) (PageHeat::repeated; repeats_). Nothing here is tuned: the
// ages are the kernel's, the floor is its default scan period. Over the
// bundled rows below (hint faults with kernel demotion against tpp) it
// took hotpage from 45 to 47 of 60 (mean +8.5 -> +9.5 points; stream_mix
// 1:8 first on CXL +14.3, stream_grow 1:8 first on CXL +5.3, no row lost
// more than 1.7) with 38% fewer ping-pongs, and on the variant traces
// from 54 to 60 of 66 (mean +12.2 -> +13.2; the largest loss 2.0,
// gups_2threads 1:4 first on CXL). Fixed windows of 3 s and 1 s, tried
// first, gained under pressure and lost up to 8 points where the tier is
// roomy (sqlite_kv 1:4, stream_grow 1:2): the window must follow the
// pressure (tools/simulate/README.md, "The repeat window"). Reported as
// RoundReport::repeat_window_s and
// the counter repeat_window_cuts. Tested in engine_test
// AReturnShortensTheRepeatWindow and TheRepeatWindowGrowsBackWithoutReturns.
//
// Reaction to change (ShiftDetector below): between rounds, every ingested
// sample whose page's node is known is tallied as served by the fast tier
// or not; when the fast tier's share of the samples since the last round
// falls below its long-run average (an exponential average over 10 s of
// rounds, ARMS' long window) by more than shift_z binomial standard
// deviations, the next round is brought forward to now (at most one
// early round per interval / 4 after the previous round). Scheduled rounds
// stay on start + k * interval: only a detected shift adds rounds.
// A baseline at or near 1 (or 0) is an estimate too. The score test takes
// the baseline p0 as exact and needs n min(p0, 1 - p0) >= 5 for its normal
// approximation; after a start in which first touch put every sampled page
// on the fast tier the baseline is exactly 1, and no fall, however deep,
// was testable until it had drifted below 1 - 5 / n. There the window is
// compared with the baseline as two samples (the two-proportion test): the
// baseline weighs its windows i by w_i, so its variance is p (1 - p) V with
// V = sum w_i^2 / n_i (1 / n for one window), and the difference of the
// two shares is tested at the pooled share (the window's samples and the
// baseline's 1 / V) with variance p (1 - p) (1 / n + V), testable when
// n min(p, 1 - p) >= 5. Where the score test is valid it is kept as it was
// (tried: the two-sample test everywhere, which adds V to the variance of
// every test and lowers its sensitivity: scan_cold 1:2 78.7 -> 75.8%, and
// V alone 77.8%). On sqlite_kv (a count walk fills the fast tier, then the
// lookups' hot pages are on CXL) the fall from 1 to 0.16 in the second
// second waited a whole interval for the next round; tested at once, that
// second's fast share is 0.36 instead of 0.19 at 1:4 (colloid: 0.69) and
// the third's 0.88 instead of 0.70. Tested in engine_test
// AFallFromAFastShareOfOneBringsTheRoundForward.
// The start is a change point too: nothing is known (no placement, no
// baseline) and first touch placed the pages with no regard to heat, so
// the first samples bring the first round forward to them, or to
// interval / 4 after Start() if they come sooner (at most one such round).
// Waiting the whole first interval lost the start of every trace: xz_mixed's
// first second holds 10% of its samples, 55% of them servable by the fast tier
// at 1:8 against 34% as first touch left them; sqlite_kv 1:8 gained 3.5 points
// of the oracle. The same holds until a round has seen samples: a source whose
// first samples come late (hint faults: the kernel's first scan pass comes a
// second or more after numa_balancing is turned on) gets a round at its
// first samples, not before interval / 4 after the last (empty) one;
// in the guest's hint-fault runs the first samples waited up to half an
// interval for the second round. Tested in engine_test
// FirstRoundComesEarlyWithSamples (both cases).
// Evidence can also outpace the rounds with no share to test: a hint-fault
// source sees only slow-tier pages (the fast share is always 0), and the
// kernel's scan pass makes every accessed slow page fault within a fraction
// of a second, so the round that the first faults brought forward saw a
// few hundred of them and the other thousands waited for the schedule. So
// once a round has run, samples on pages it did not place (of unknown
// node) that reach what its window held per interval (its samples over
// its length, times the interval) bring the next round forward, at most
// one per interval / 4 after the previous (new pages sooner than that bring
// it to that time: a scan pass's faults can be over by then, and the
// guest's runs waited for the schedule); at the last window's rate that
// takes a whole interval, so only a burst (4x that rate or more) does it.
// A burst round opens no change window. Tested in engine_test
// ABurstOfNewPagesBringsTheNextRoundForward.
// A count is slow to judge a pass that arrives in parts: in the guest of
// tests/compare (interleaved shape) a round that saw the first 2,681-3,359
// of a pass's 6,144 faults made the next 2,785 wait for the schedule (the
// count rule wanted 7,300), 0.2 s with the migrator idle. So, for a source
// that sees no fast-tier page (the share baseline 0), samples on new pages
// whose rate since the last round exceeds the last window's rate of all
// samples by more than shift_z Poisson standard deviations (and number 5
// or more) are a burst too, judged from interval / 4 after the last round
// (NovelRateRose). New pages alone cannot outpace all samples of a steady
// rate; the Poisson test keeps chance out. Tested in engine_test
// NewPagesAtARateThatRoseBringTheRoundForward.
// Arrivals. Even so a round comes after the faults and its moves after the
// round: in the guest of tests/compare (clusters, 6,144 hot pages) the
// kernel's scan pass made every hot page fault before a round that took
// 249 ms under TCG (bounds 64, DecideMoves 82, scanner pass 46, placement
// query 28), then the migrator moved them in 0.2 s; the kernel's tiering
// mode copies each page inside its own fault. For a source whose samples
// are slow-tier pages only (EngineOptions::slow_tier_samples: hint faults
// in tiering mode, which scans no top-tier page) a page's first sample is
// already what the round would promote it on when a fast node has room:
// with no victim the swap test has nothing to beat, and a round promotes
// every such candidate (rate_lo > 0). So between rounds PlaceArrivals
// takes the 4 KiB pages sampled since the last round that no round has
// placed, queries their nodes, and runs the round's placement on them
// alone (DecideMoves: masks, bind ranges, holds, target order, budgets)
// with no victims, so that it only promotes into room above the high
// watermark, projected past the queued moves; the loop hands the moves
// over at once. Rounds are unchanged: the next one finds the pages where
// the migrator put them, and pages still queued are projected as before.
// Tested in engine_test ArrivalsFromASlowTierSourceArePlacedBetweenRounds.
// A round waits while arrivals are placed. A round blocks the loop that
// reads samples and places arrivals (79-188 ms under TCG), and on a
// machine whose other CPUs run the workload it takes the CPU the
// migrator's copies need. Timestamped logs of one guest run showed both:
// the scan pass's faults reached hotpage in two batches 150 ms apart,
// split by a round that planned nothing (the first batch had already been
// placed), and after the switch by 250 ms, split by a round of 188 ms.
// So a round that is due waits while the step that would run it placed
// arrivals (RoundWaitsForArrivals), at most until half an interval after
// it was due: a burst is placed as it comes and the round then sees all
// of it; a steady stream of new pages still gets its rounds. It also waits,
// within the same bound, while the moves of the arrivals placed since the
// last round are still queued: the round log of a guest run (tests/compare,
// clusters) showed the first round start as the burst's last pages were
// queued and run 248 ms beside the migrator's copies on the one vCPU the
// workload left, 3165 of the 6144 pages moved when it began. Measured in
// tests/compare (hint faults, clusters and interleaved, 8 runs of each
// binary alternating): time to 90% after the switch 0.37-0.79 s (median
// 0.48) -> 0.21-0.32 (0.28), after the start 1.48-2.06 (1.65) ->
// 1.42-1.60 (1.53). Tested in engine_test ARoundWaitsWhileArrivalsArePlaced
// and attach_loop_test ArrivalStreamTest.
// A shift to pages never sampled. The share test counts only samples on
// pages whose node the last round knew, so a hot set that moves to pages
// never sampled before (a table's untouched part, a new arena) is
// invisible to it until a round has placed them, and at the last window's
// rate the burst rule waits a whole interval for them. So the fraction of
// a window's samples on such pages has a baseline too (the same 10 s
// exponential average, from the first window after a placement, floored at
// 1/64 so that a run of known pages stays testable), and a rise above it
// by more than shift_z binomial standard deviations is a shift like a
// drop of the share: the round comes forward and opens a change window,
// which the novelty also keeps open. Only for sources that see the fast
// tier (a share baseline above 0): a hint-fault source's new pages are the
// burst rule's. On gups_shift 1:2 the first shift (to pages the uniform
// background had mostly not sampled) was caught only by the scheduled
// round 0.6-1 s later; with the test 94.5% -> 95.5% of the oracle (1:4
// 89.6 -> 89.9, stream_grow 1:2 78.3 -> 79.3 with 171 ns against 192;
// xz_mixed 1:8 68.2 -> 67.6, 1:2 82.4 -> 82.2; every other row the same).
// Tested in engine_test AShiftToPagesNeverSampledBringsTheRoundForward.
// A detection also opens a change window: the counts the empirical-Bayes
// prior (above) is fitted to and applied to become the samples since the
// change point (the round before the detection), over the time since it,
// instead of the decayed counts. Those mix the two regimes: the old hot
// set's pages keep high counts (upper bounds) for epochs after their last
// sample and the new set's pages have too few to show a lower bound, so
// the swap test waited for the old set's counts to decay (about 4 s at
// 1.5 samples/s). Since the change point the table's counts are a clean
// sample of the new regime: most pages have none, the new hot set has
// some, and the prior fitted to them calls a page with none cold and a
// page with a few hot, as the decayed counts' prior does in a steady
// phase. One model on both sides of each test, as before (never mixed).
// A key's samples since the change point are summed round by round from
// the exact per-round differences (not the count now less the count at
// the change point: the epochs between halve both, and with them the
// samples since the change). In the window the victims also rank by that
// prior (PlacementInput::victims_by_prior: coldest first by the smallest
// of rate_hi, long_hi and prior_hi): the long window's premise, a rate
// that held over it, is what the change broke, and by it a page first
// sampled after the change point looked colder than the old hot set, so
// watermark demotions and swaps took the new hot set's pages first and
// the round's bar (placement rule 2b) stopped the rest (gups_shift 1:8:
// 73.5% of the oracle, 76.3% with it). Tested in engine_test
// ChangeWindowCountsEverySampleAcrossEpochs and
// ChangeWindowSwapsTheNewHotSetInAtOnce.
// The window closes at the first round whose samples no longer show the
// drop (the detector's test over the whole round; a round with too few
// samples for the test, as an early round soon after the last can be,
// keeps it open), or when it reaches the
// baseline's 10 s, after which the decayed counts hold no pre-change
// samples of weight. A bandwidth shed (rule B below) lowers the fast
// share by design: the baseline is lowered by the shed pages' share of the
// accesses, so a shed is not read as a shift.
// A second change inside the window. While it is open every detection
// compares the baseline with a window it already knows fell; a further
// change (the hot set moves again, a load phase ends, or the first window
// was opened by a small fall that the real shift follows) was counted from
// the first change point, the two regimes mixed in the prior's counts
// just as the decayed counts mix them outside the window. So a detection
// whose window's share also fell below the share of all the samples since
// the change point (the same test, ShareFell in engine.cc, that share as
// the reference with variance 1 / its samples) moves the change point to
// the round before, as a first detection sets it, and ends the holds
// again. With the two-sample test above and without this rule,
// gups_shift 1:4 lost 1.3 points: a window opened by a 2% fall at 19 s
// (its baseline near 1) was still open at the shift at 20 s. With both,
// on sqlite_kv the lookups' second key range (about 13 s) comes inside a
// window: 1:4 seconds 14-17 0.53-0.84 -> 0.65-0.89 of the samples on the
// fast tier, 1:8 0.17-0.66 -> 0.50-0.77.
// Tested in engine_test ASecondFallInTheChangeWindowMovesTheChangePoint.
// A detection that opens the change window also ends every ping-pong
// hold (MemoryView::ReleaseHolds; migrator/pingpong.h). A hold says the
// page's evidence could not tell it from its competitors under the old
// regime; after the change point that judgement is stale, and pages held
// on the fast tier as the old hot set's would otherwise stay there for
// the hold's minutes (gups_shift 1:8: 49 of the fast tier's 693 pages
// after the second shift, 71.9% of the oracle against 73.5% with the
// release). A page that bounces again is held again after the migrator's
// reversals; a steady phase without a detection keeps its holds. Tested
// in engine_test ChangeWindowSwapsTheNewHotSetInAtOnce and
// HoldsSurviveASteadyPhase.
// A change is confirmed by the fast tier's pages cooling. The share can
// fall without any page changing its rate: when first touches have filled
// the fast tier, pages touched later land on the next tier, and as rounds
// place them their samples lower the fast share of known pages; the
// baseline (from windows in which every page fitted) lags that by its 10 s.
// On packages_2pkg at 1:2 the detector then fired every quarter second from
// 2.6 s to past 11 s: the change window stayed open, its counts were the
// last second's, and the victims ranked by them were hot pages that drew no
// sample lately (2514 hot pages on the fast tier at 4 s, 2281 at 5 s, while
// 636 cold ones stayed). What the change window is for, a hot set that
// moved, leaves a mark the fill does not: the fast tier's pages cool. So
// the round of a first detection also compares the fast tier's pages'
// samples in the round with what their long-window rates predict, r =
// (long count - 1) / the long window (the -1: a page's first sample is what
// made it known, not a rate; counting it made cold pages first touched a
// second ago predict samples they never draw), by two statistics
// (policy/fast_tier_cooling.h): the pages with two or more samples that
// drew none (O) against the sum of exp(-r dt) (E), and all the pages'
// samples against the sum of r dt. It opens the window only when either
// falls short by more than shift_z standard deviations; otherwise the
// round is an early round on the decayed counts
// (RoundReport::change_unconfirmed). The second statistic is for pages too
// cold for a zero to be news: at the end of a scan (a trace not bundled,
// `hotpage_trace_gen scan --seed 3 --focus-share 0.7 --sample-period
// 30000`, 1:2 and 1:4) thousands of pages sampled once or twice a pass
// fall silent together, and the zeros alone kept the window closed: 77.5%
// and 61.5% of the oracle, 79.9% and 64.1% with both
// (before either rule: 80.1%, 61.5%). A drop within
// the baseline's 10 s of a change point that stood belongs to the same
// change: it opens the window without a second test and becomes the
// latest change point (the window closes at a round that no longer shows
// the drop, and by the next detection the old hot set's pages have left
// the fast tier and cannot cool again; on scan_cold the scan's end at 15 s
// is such a point, 10 s after the scan's first confirmed one). Only where
// samples count accesses (a fault source's zero is a page not re-armed).
// On gups_shift 1:4 the shifts at 20 and 40 s gave O - E = 233 and 215 (z
// 18 and 17); the detections of the fill and of noise in between gave -75
// to +28 (z -5.6 to 2.2). A page with two samples predicts no sample for
// the zeros (policy/fast_tier_cooling.h: its second sample selected it):
// cold pages sampled twice by chance had made fills with other seeds of
// packages_2pkg read as changes in 5 of 10 runs. Tested in engine_test
// AFallWithoutCoolingOpensNoChangeWindow and fast_tier_cooling_test.
// Swaps that do not pay hold the short window back. The short window (a
// candidate's samples since the last round) lets a page that just turned
// hot beat a victim within a round, on the premise that its rate over the
// last fraction of a second is its rate for a while. A program that
// sweeps its arrays breaks it: each page is hot while a pass goes over it
// and quiet until the next, and a round promotes the pages the last
// quarter second swept in place of those the round before promoted, which
// the next pass needs again. The engine checks the premise on its own
// moves: the next round looks up each swap's two entries (the promoted one
// and the victim it displaced, PlannedMove::paired_vaddr) in its counts,
// and adds their samples since the swap to two sums decayed over the
// decayed count's epoch (interval x epoch_rounds). When the displaced
// pages drew more samples than the promoted ones by more than shift_z
// Poisson standard deviations, D - P > shift_z sqrt(D + P), the round's
// candidates do not take the short window's bound: they rank by their
// decayed counts, priors and long window (RoundReport::
// short_window_held). A round after one without swaps has nothing to
// weigh and trusts the short window again, so its swaps are the next
// measurement. Only with the detector on (shift_z > 0) and where samples
// count accesses. On networkx PageRank recorded under Lackey (not
// bundled; tools/simulate/README.md) the swaps of the round at 30.0 s drew
// 22 samples on the pages promoted and 250 on the pages displaced in the
// next quarter second; with the rule (2 and 10 rounds held of 94 and 97)
// 1:4 / 1:8 61.5 / 49.1 -> 66.7 / 56.7% of the oracle. On the bundled
// traces it holds rounds only on scan_cold 1:2 and sort_lines 1:2 / 1:8
// (sort_lines 1:8 36.5 -> 37.5%, 26.9 -> 19.5 MB). The cost: two lookups per
// swap of the last round; with 8,400 and 27,000 swaps a round at 64k and
// 256k live entries, 36.9 against 36.4 ms and 117 against 117 ms a round
// (attach_round_benchmark BM_RoundSwaps against BM_RoundSwapsWithoutPayoff,
// -c opt, eight interleaved repetitions, medians). Tested in engine_test
// SwapsThatDoNotPayHoldTheShortWindowBack.
//
// Silences that do not hold. A victim's recency bound, U(0) P / gap, is a
// bound on one page at the scan's z: a page of rate r is silent for gap
// with probability exp(-r gap / P), 12% at U(0) = 2.1. But each round tests
// every page on the fast tier, and where hundreds of them are steady the
// least likely silences come up every round by chance: on stream_mix
// (tests/traces/stream_mix.hpt) 1:8, 512 streamed pages at 4.7 samples/s
// fill the fast tier, about five of them are silent for a second at any
// time (exp(-4.7) = 0.9%), and that silence bounded each below the 2.1/s
// of a hot-set page (0.6/s) that drew three samples in a quarter second.
// From 3 s on the rounds swapped 292 streamed pages out (149 of them for
// hot-set pages), 287 back, and put 19 on a ping-pong hold on CXL, where
// they stayed: at the end 20 of the 512 were on CXL, against 3 under
// colloid, and the fast tier's share was 1-2 points below colloid's from
// 15 s on. On a program whose pages stop (a sort's runs, xz's window) the
// same silence is the news that a page is done, and taking the bound at the
// family-wise level everywhere (the tail over the fast tier's pages,
// Bonferroni: U(0) + ln M) cost sort_lines 1:2 59.2 -> 55.0 and xz_mixed
// 1:8 71.1 -> 65.8. Which of the two a workload is, the engine measures on
// its own moves, as for the short window above: each swap whose victim's
// upper bound came from its silence (the recency bound below its decayed
// count's) records the rate that bound claimed; the next round adds the
// samples those victims drew since the swap and the claimed rate times the
// time since, both decayed over the epoch. Under the bounds the victims
// draw no more than claimed (each bound holds with probability 1 - a); when
// they drew more by z Poisson standard deviations of the two sums, O - C >
// z sqrt(O + C) (z, the bounds' own confidence: the bounds are the claim
// tested), the silences did not hold, and the round takes every victim's
// recency bound at the family-wise tail, (U(0) + ln M) P / gap with M the
// tracked pages on fast nodes: a silence that is news among M pages. A round
// whose swaps took no silence-bound victim adds nothing, so the doubt fades
// with the sums. Only where samples count accesses. stream_mix 1:8 187.2
// -> 186.6 ns (colloid 184.5), 12.4 -> 10.2 MB; stream_mix with other seeds
// (21-24, 41-44) 1:8 -0.2 to -1.5 ns and 2-3 MB less each, four of the
// eight now below colloid's latency (none before); sort_lines 1:2 19.5 ->
// 19.1 MB, within colloid's 19.2; no other bundled row moved by more than
// 0.2 of the oracle (tools/simulate/README.md). Counted in
// EngineCounters::silences_doubted_rounds; RoundReport::silences_doubted,
// silence_observed, silence_claimed. Tested in engine_test
// SilencesThatDoNotHoldAreDoubted.
//
// Benefit against cost: a move is planned only if the access latency it is
// expected to save pays for it (PlacementInput::migration_margin_per_sec).
// For a page of rate r (accesses/s) moved from the next tier to the fast
// one, the saving is r x dL x H, where dL is the read-latency gap between
// the fastest tier and the next (idle latencies of policy/loaded_latency.h:
// HMAT, else its per-tier defaults) and H the horizon over which a promoted
// page stays hot; the cost is the migrator's measured time per moved 4 KiB page
// (its thread's CPU time over the pages it moved: ObserveMigration). The
// horizon is learned: promoted pages' lifetimes (promotion to demotion) are
// taken as exponential and H is their maximum-likelihood mean, exposure /
// deaths, with one pseudo-lifetime of the decayed count's epoch length
// (the shortest life the engine's own evidence implies) as the prior:
// H = (exposure + L) / (deaths + 1). Until the migrator has moved a page
// the cost is unknown and nothing is gated. All three are in RoundReport.
// The rate r must count accesses: PMU samples stand for `period` accesses
// each, but a fault source raises one fault per page per re-arm (a hint
// fault per kernel scan pass, 1-19 s apart) and DAMON counts sampling
// intervals, so their r bounds the access rate from below, for a hot page
// by three orders of magnitude. Priced against the cost, such a bound
// held every move back: with a 0.5 s interval H starts at 1 s, and under
// emulation (~100 us a page) the margin was ~500 accesses/s against one
// hint fault a second; the gate opened only after a first large batch
// had grown H by its exposure, and when the first batch was one page (its
// move call's fixed cost taken as the per-page cost) never (a hot set
// left on the slow node for a minute in attach_package_vm_test). Once a
// sample that does not count accesses is ingested, the engine gates no
// move (RoundReport::rates_bound_accesses); the evidence rules still
// apply. Tested in engine_test FaultSamplesAreNotPricedAsAccesses.
//
// Bandwidth (Colloid's rule, SOSP'24, on marginal latencies): the samples
// since the previous round give each node's demand (period x 64 B per
// sample over the time; policy/loaded_latency.h), hence its loaded latency
// and its marginal latency M = L + D dL/dD (what one more access per
// second adds to the total latency: its own plus the queueing it adds to
// every other; loaded_latency.h, "Marginal balance"). A sample of a page
// whose node was not known at ingestion (new since the last round) counts
// on the node the round's placement query then finds it on (first touch
// put it there); before, such samples counted on the sampling CPU's node,
// which made every first round look saturated (all demand on DRAM).
// Pages sampled once. The demand is a forecast: the next window's accesses
// on the placement as it is now. While first touch is still placing pages,
// part of the next window's accesses go to pages not touched yet, which
// land where first touch puts a page then (the CPU's node while it has
// room, else a slower one), not where the pages of this window were put.
// Good-Turing's estimate of that part is the share of the samples on pages
// seen exactly once (N1 / N), and those pages are themselves the least
// known (one sample: their rates are overestimated by about as much), so a
// page new since the last round with one sample in the window counts where
// first touch puts a page now (FirstTouchNode: the sampling CPU's node if
// its free memory, projected past the queued moves, is at or above its low
// watermark, else the nearest node that has such room), not where it was
// found. On stream_mix at 1:8 the first round (0.25 s) had 47% of its
// samples on such pages, found on DRAM, which first touch had filled: DRAM
// looked saturated (400 ns, marginal 6800 ns), the round shed 18 stream
// pages and held promotions, while the pages touched since went to CXL
// and saturated it (1250 ns) until the next round at 1 s; counted where
// the next pages land, DRAM is at 99 ns and CXL saturated, and nothing is
// shed. Where DRAM still has room (stream_mix 1:4) they count on DRAM, as
// before, and the first round sheds. In a steady phase the pages sampled
// once are the cold pages touched for the first time (3.5-5% of the
// samples on stream_mix 1:8 after 5 s). Tested in engine_test
// APageSampledOnceCountsWhereFirstTouchPutsANewPage. Colloid
// balances the tiers' loaded latencies; the mean latency is lowest where
// their marginal latencies are equal instead (DRAM at 80 ns beside an idle
// 250 ns tier: 70% of its peak, not 91%), so that is what the rule
// balances. While the fast tier's marginal latency (its nodes' mean,
// weighted by their demand; past the curve's cap, its left limit) exceeds
// the next tier's by more than Colloid's delta (5%), a promotion would add
// to the total: the round promotes nothing, and it sheds (placement rule
// B) hot pages of the fast nodes until the two tiers' marginal latencies
// meet:
//   - how much: BalanceMarginalLatencies (water-filling per fast node on
//     the inverse of the marginal curve, checked against shedding only a
//     saturated node's excess and against nothing), as access rates
//     (demand / 64 B);
//   - which pages: the densest first (rate per 4 KiB, the decayed count's
//     point estimate), each charged its upper bound and skipped if that is
//     above what is left to shed, so the demand is met with the fewest
//     bytes and overshoots only beyond the bounds (a round with few
//     samples per page sheds less and the next rounds the rest: past the
//     balance the slower tier's curve is steep; placement.cc); cold
//     pages shed nothing and are never chosen for it (Colloid moves hot
//     pages, section 4.2); within the round's move budget (the migrator's
//     rate) and every rule that binds a demotion (bind, `prefer (many)`,
//     the slow node's low watermark, back-off, ping-pong holds).
// Hysteresis, three parts, none of them a fitted constant:
//   - a dead band: shedding starts above +5% (Colloid's delta), promotions
//     resume below -5% (the bound state holds in between), and both aim at
//     equality, so a shed or a promotion that lands on its target leaves
//     5% of room before the other side's trigger; Colloid's delta itself
//     covers its measurement noise, and the demand here is a count of
//     about 10^3-10^4 samples per round (1-3% Poisson noise);
//   - promotions are capped too (PlacementInput::promote_headroom): into
//     each fast node they may add only what that node takes in the marginal
//     balance the other way (the next tier's nodes giving demand to it
//     alone), which counts both tiers' loads after the move: the fast
//     node's rising and the next tier's falling (with the next tier at
//     250 ns idle and DRAM at 80 ns that is 70% of DRAM's peak, more when
//     the next tier is loaded; no limit when the slower tiers' whole
//     demand would fit, so a young page's inflated rate estimate cannot
//     block a promotion on a light load), so re-promoting what was shed
//     cannot overshoot either;
//   - a shed is not a death: the horizon of benefit-against-cost treats a
//     page shed while still hot as censored (exposure counts, no death),
//     so shedding does not shorten it.
// Reported in RoundReport (the latencies, bandwidth_bound, the shed demand
// and the common latency, the headroom, decision.shed_pages).
// A saturated slower tier. A node of the next tier serving at least
// kMaxUtilisation of its peak (policy/loaded_latency.h: the curve's cap,
// 5x its idle latency, where the queue has no steady state) while
// promotions are not held brings the next round to interval / 4 after this
// one (the shift detector's bound on extra rounds), round after round
// until it is below the cap: every access it serves pays the cap's
// latency, the promotions that relieve it are the moves worth most, and
// their evidence accrues between rounds, so waiting for the schedule left
// it saturated for up to an interval. No change window opens (nothing says
// the regime changed). On stream_mix 1:8 first touch puts the pages
// touched after DRAM filled on CXL, saturated from the first round (0.25
// s) to about 1.3 s; with the rounds at 0.5 and 0.75 s the first two
// seconds' mean latency fell from 321 to 278 ns (the first 395 -> 284, the
// second 247 -> 272: each round's watermark demotions, about 21 pages of
// little evidence, partly stream pages, go to CXL; colloid: 222 and 205,
// its quantum 0.5 s and its promotions by rank without a confidence
// test). Tested in
// engine_test ASaturatedSlowerTierBringsTheNextRoundForward.
//
// The odds suffice while a slower tier is saturated. The pair test (policy/
// count_prior.h) accepts a swap when the posterior puts at most the bounds'
// tail (12% at z = 1.163) on the candidate not being hotter than the
// victim: a swap must be likely right, because a wrong one costs its two
// moves and, by the same latency gap, what the displaced page loses. While
// a node of the next tier is saturated (as above: past the curve's cap,
// promotions not held) every access it serves pays the cap's latency, 5x
// its idle one, so the gap a right swap closes dwarfs the moves' cost
// (the benefit-against-cost margin, which still applies, falls by the
// same factor), and a swap that is more likely right than wrong gains in
// expectation: the tail is 1/2 (a tie never passes: a shared grid value
// counts as not hotter). Colloid swaps by rank with no confidence test at
// all; the 12% tail held stream_mix 1:8's first second at 300-800
// candidates "lacking evidence" per round (1-2 samples a stream page, 0.25
// s apart) while CXL sat at its cap. Only the pair form is relaxed: the
// Poisson bounds keep their z, and a round outside saturation is as before.
// stream_mix 1:8 190.5 -> 187.2 ns (its first second 281.8 -> 247.0 ns,
// the second 234.4 -> 204.3; colloid 184.5: 222.2 and 204.8), stream_grow
// 1:4 / 1:8 206.3 / 497.4 -> 201.6 / 494.6 ns, no row without a saturated
// round changed (tools/simulate/README.md). Counted in
// EngineCounters::odds_pair_rounds; RoundReport::pair_tail. Tested in
// engine_test ASaturatedSlowerTierTakesTheOdds.
//
// New pages use up the room. A round demotes a fast node below its low
// watermark back to its high one, and the room it leaves is for the pages
// first touched before the next round: first touch puts a new page on the
// CPU's node while it has room, on a slower node after. Checked once per
// round, the watermark let first touch spill new pages to the slow tier for
// the rest of each interval, and kept the last interval's new pages (each
// seen once: the coldest of the tier when they are cold) on the fast tier
// until the schedule. The kernel's kswapd reclaims when an allocation finds
// a node below its watermark, not on a timer; here a sample on a page no
// round placed stands for a first touch on the sampling CPU's node, and
// when such pages (each counted once, by linear counting in a fixed 128 KiB
// bit map: no allocation on the sample path, any room size) have used up
// the room the last round left on a fast node (its projected free memory
// after the round's moves), the next round comes forward, at most one per
// interval / 4 after the previous (the shift detector's bound). That round only
// demotes (its watermark demotions; no promotion or swap, as kswapd): the
// candidates' evidence accrues until the schedule. Its window is tested for a
// shift as any other (a shift makes it a full round and opens the change
// window: the round comes at its time, before the sample that would have shown
// one). A page sampled for the first time that sat on a slow node unsampled is
// counted too: a round early, never a move that would not be made at the
// schedule. Only for a source that sees the fast tier (a share baseline
// above 0: a hint fault's new page is a slow page, not an allocation), and
// only where bandwidth does not decide: not while the fast tier is
// bandwidth-bound nor while the next tier's loaded latency is above its
// idle one by more than Colloid's delta (room is then rule B's trade, and
// on stream_grow 1:4 earlier demotions into a loaded CXL cost 208 -> 224
// ns). On packages_2pkg 1:2 (dram+cxl; 23 such rounds of 90) the cold new
// pages on the fast tier at an interval's end fell from about 115 to 45-
// 100, the fast share of 12-40 s from 0.870 to 0.881 (memtis 0.885, which
// migrates every 500 ms) and of 2-12 s from 0.791 to 0.812: 85.7% -> 87.0%
// of the oracle (2pkg+cxl 85.7% -> 86.9%). More new pages now pass through
// the fast tier, and each cold one is demoted once: 31.0 -> 38.6 MB there,
// sqlite_kv 1:4 13.0 -> 18.8 MB for 82.5% -> 87.7%. Tested in engine_test
// NewPagesThatUseUpTheRoomBringADemotionRound.
//
// A room round reads no table. The full round reads every live entry, so
// its cost grows with the table (attach_round_benchmark: ~30 ms at 64k
// live entries, ~0.3-0.4 s at 1M), and a room round that was a full round
// without candidates cost as much: within its CPU budget (EngineOptions::
// room_round_cpu_share) only tables below ~64k entries (256 MiB sampled)
// had the rule at all. A room round needs only victims, and two kinds of
// page can be the coldest on a fast node: those the last full round
// ranked (its victims_, the coldest of the fast tier by their upper
// bounds, at most top_k) and those first touched since (each sample on a
// page no round placed is kept for the bandwidth demand, at most
// kMaxUnknownDemand). So a room round takes the last full round's victims
// that no round has moved since, less those the table saw sampled since
// that round (one lookup each: their bounds did not see that sample; the
// others' recency bounds are taken again over the longer gap), queries the
// nodes of the new pages (no other page) and gives those on a fast node the
// bounds a full round gives a page with their samples (the decayed count over
// the last full window, the long window, both priors; in the change window, its
// prior and its ranking). It demotes them to the watermarks and touches no
// window, count or baseline: the next full round sees the whole interval. It
// reports the last full round's figures beside its own moves. The rule
// is now for sources whose samples count accesses as they happen (PEBS,
// IBS, traces), not for fault sources or DAMON (rates_bound_accesses_).
// There a sample on a page no round placed is as often a page faulting
// again after a re-arm as a first touch: at attach every page of the
// process is such a page. Its rooms had been kept unarmed in the guests
// only by the budget, since TCG makes full rounds cost 130-500 ms; once the
// budget read the room round's own cost, the daemon's write-fault guest
// (daemon_fair_vm_test) had its hot set reach 90% after 155, 41 and
// 4.8 s in 3 runs, against 14.7, 28.0 and 4.8 s before. BM_RoomRound
// (10.6k new pages on a 1 GiB node) measures 10-12 ms CPU at 64k, 256k and 1M
// live entries, against 31, 82 and 291 ms as a full round. Scores (score_table
// .py) went up, not down: tuning 75.9 -> 76.1, validation 74.2 -> 74.4,
// all 75.3 -> 75.5 (sqlite_kv 1:4 / 1:8 87.8 / 88.1 -> 88.7 / 89.6,
// scan_cold 1:4 67.4 -> 68.1, gups_shift 1:8 77.4 -> 78.0, sort_lines 1:2
// 56.2 -> 59.7; down: sort_lines 1:4 49.5 -> 48.5, xz_mixed 1:4 / 1:8
// -0.4, zipf_kv 1:4 / 1:8 -0.2), as the next full round's window is no
// longer cut short by a room round; bytes no more than the best peer's in
// 23 rows of 33, as before. Without the check of pages sampled since,
// tuning 76.0, sqlite_kv 1:8 89.6 -> 88.1 and scan_cold 1:4 40.5 -> 44.4
// MB. Tested in engine_test
// ARoomRoundReadsNoTable.
//
// Sharing is remembered (rule L, --locality). The table reads a page as
// shared from its decayed counts: 2 or more of its samples, and at least
// 1/8 of them, from nodes other than its home. Every epoch halves both
// counts and rounds down, so a shared page whose foreign count was 2 or 3
// reads private after one halving, and its next stretch of samples from
// one node (a write-fault source sees only the first writer after each
// re-arm, and one thread can come first for several passes) gives it 12
// samples from its home with no foreign one: rule L then moved it to that
// node (attach_locality_vm_test failed once so: 67 of 1024 pages written
// from both packages moved). A page read as shared at any round of the
// last long window (EngineOptions::long_window_ns, 10 s) is shared for
// rule L; one that stays private for that long is judged by its counts
// again. Tested in engine_test ASharedPageStaysSharedThroughAQuietStretch.
//
// Evidence that a page is private (rule L, --locality). The decayed count
// cannot carry it: it halves every epoch (2 s), and a source that samples
// a page once per pass (write faults: once per soft-dirty re-arm) reaches
// 12 samples in it only with a pass every 0.33 s or faster. Under load the
// re-arm interval grew to 0.76-1.32 s in the 2pkg+cxl guest (clear_refs
// took up to 221 ms under TCG), every round skipped A and B as
// not_enough_evidence, and attach_locality_vm_test failed 3 of 9 runs. So
// rule L's evidence is a count of samples that no halving resets: a
// sequential probability ratio test per page over all its samples since
// the table homed it (WeighPrivateEvidence, once per round).
//   - The round's samples of each page, by node: the walk takes the
//     entry's count and foreign count less the previous round's, halved by
//     the epochs between (exact: samples between two rounds all fall after
//     the halvings, which come at a round's end, and the table's decay is
//     the same integer shift): foreign samples = the foreign difference,
//     home samples = the rest (samples of unknown node count as home; the
//     table does not tell them apart).
//   - The score, in home samples: +1 per home sample, -7.04 per foreign
//     one. That is the log likelihood ratio of "private: a sample comes
//     from another node with probability p1 = 1/256" against "shared by
//     two nodes evenly: 1/2", over log(2 (1 - p1)), the ratio of one home
//     sample. p1 is where the score's drift changes sign at a foreign
//     share of 1/8, the table's own sharing line (Sharing::kShared): a
//     page with less foreign traffic gains ground on average, one with
//     more loses it. Bounded to [-m, +m], m = locality_min_samples (12);
//     a new page starts at 0, a page the table reads shared or that it
//     re-homed drops to -m, and counts lower than the halving explains (a
//     displaced, re-inserted entry) add nothing. PageHeat::samples is the
//     score's whole part (0 if negative): rule L moves at m.
//   - What it guarantees: for a page whose samples come from other nodes
//     than its home with probability 1/2 or more, independently, the
//     likelihood ratio is a nonnegative supermartingale between two visits
//     to the floor (the cap only lowers it), so by Ville's inequality it
//     reaches rule L's threshold with probability at most (128/255)^12 =
//     2.6e-4 from a new page's 0, and at most (128/255)^24 = 6.6e-8 each
//     time it starts again from -m (at most once per foreign sample, shared
//     reading or re-homing), however many rounds look and whatever the
//     source's rate. 12 private samples move a page, as before, at any
//     rate: 12 s at one write-fault re-arm a second.
//   - What it does not: samples that are not independent. A write-fault
//     source attributes a page per re-arm to its first writer, and one
//     thread can come first for several passes; the memory of sharing
//     (above) still holds a page read shared in the last long window.
// Kept for pages on the fastest tier only, the ones rule L reads
// (hot_on_fast): a page starts at 0 when it arrives there. Cost, with
// --locality only: one 24-byte map entry and one lookup per round per such
// live entry (attach_round_benchmark BM_RoundLocality). Tested in
// engine_test APrivatePageWrittenOncePerSecondMovesToItsWriter and the
// tests after it.
//
// Queued moves. A round reads free memory now, but the moves the last
// rounds asked for may still be in the migrator's queue: a round's budget
// is a second of the migrator's rate, a move_pages copy costs 50-150 us a
// page under emulation (6144 pages took 0.5-0.7 s in the guests), and
// early rounds come a quarter interval apart. Read as it was, free memory
// showed the room the queued promotions were about to take (so the round
// planned promotions into it again: over the high watermark, down to the
// kernel's reserve, where move_pages answers ENOMEM and the node is backed
// off for 10 s) and the deficit the queued demotions were about to cover
// (so it demoted more victims again). Each round therefore plans against
// the free memory projected past the queued moves
// (MemoryView::QueuedMoves, ProjectQueuedMoves). Tested in engine_test
// QueuedPromotionsTakeTheirRoomBeforeTheyAreDone.
//
// Time: every timestamp is the caller's clock in ns; attach passes
// CLOCK_MONOTONIC (the samplers' clock), simulate the trace's own times.
// Rounds fall on start + k * interval; a caller that is late runs one round
// (missed rounds are skipped, not replayed). Epochs are time-based too
// (start + k * epoch_rounds * interval), so early rounds do not speed the
// decay.
//
// Thread-compatible: one thread calls everything.

#ifndef HOTPAGE_POLICY_ENGINE_H_
#define HOTPAGE_POLICY_ENGINE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hotness/hotness_table.h"
#include "hotness/scanner.h"
#include "policy/count_prior.h"
#include "policy/loaded_latency.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "sampler/sample.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

// The memory the engine manages, as one round sees it.
class MemoryView {
 public:
  virtual ~MemoryView() = default;
  // The node of each 4 KiB page at `pages` into `status` (same length): a
  // node id >= 0, or -errno (e.g. -ENOENT: not present), as move_pages(2)
  // with nodes == NULL. Returns 0, or -errno if the query failed as a whole
  // (then `status` is ignored).
  virtual int QueryNodes(absl::Span<const uint64_t> pages,
                         absl::Span<int> status) = 0;
  // The process's per-range policies (may be empty: default policy).
  virtual std::vector<NumaMapsRange> Ranges() = 0;
  // Free bytes per node now (nodes not listed are unknown).
  virtual std::vector<NodeFree> Free() = 0;
  // The moves the caller's migrator has accepted and not yet done, by node
  // (default: none). A round plans against free memory projected past them
  // (ProjectQueuedMoves; the file comment, "Queued moves").
  virtual std::vector<NodeQueued> QueuedMoves() { return {}; }
  // Nodes not to target this round (the migrator's ENOMEM back-off).
  virtual std::vector<int> BackedOffNodes() { return {}; }
  // Pages on ping-pong hold.
  virtual bool IsHeld(uint64_t vaddr) { return false; }
  // Ends every ping-pong hold (the engine detected a change of regime: the
  // file comment). Returns how many ended. Default: none to end.
  virtual size_t ReleaseHolds() { return 0; }
  // Starts of the 2 MiB-aligned chunks backed by transparent huge pages
  // (any order). Samples inside them count for the whole 2 MiB, which moves
  // as one unit (rule H, policy/placement.h). Empty: none known.
  virtual std::vector<uint64_t> HugeChunks() { return {}; }
  // True once the round's owner is stopping (the daemon's SIGTERM): the
  // round in progress stops querying at its next QueryNodes call
  // (EngineOptions::placement_query_batch_pages) and returns with no
  // decision (RoundReport::interrupted), so a stop is not held up by a
  // long placement loop. The engine stays usable; its next round's short
  // window then spans two rounds' samples. Default: never.
  virtual bool Interrupted() { return false; }
  // True while the view reports less free fast memory than there is, to
  // hold the process to a share of the fast tier (the daemon's
  // FairShareView with a target): a shortage it reports is room the
  // process must give back, so watermark demotions stay on whatever the
  // source sees (file comment, "Watermark demotions need a full view").
  // Default: never.
  virtual bool HoldsToAShare() { return false; }
};

struct EngineOptions {
  // The managed process (its samples' pid). Moves carry only addresses: an
  // engine manages one address space; callers filter samples to it.
  uint32_t address_space = 0;
  uint64_t interval_ns = 1000000000;  // one round per interval
  // Counts halve every this many rounds. 2 (at 1 s rounds: a decayed
  // count's window W = t + L is 2-4 s): measured on the simulator's traces
  // (tools/simulate/README.md), a hot set that moves is recognised about
  // twice as fast as with 4 (W 4-8 s), at no loss on stationary ones.
  uint32_t epoch_rounds = 2;
  // Normal quantile of each page's rate interval. A promotion over a victim
  // needs candidate.lo > victim.hi: two independent intervals that must not
  // overlap. For equal true rates that happens (large counts) when the
  // difference exceeds z * sqrt(2) standard deviations, so z = 1.645 /
  // sqrt(2) = 1.163 makes the pointless-swap probability the one-sided 5%
  // the hotness statistics aim at (hotness/rate_stats.h); 1.96, one page's
  // two-sided 95% interval, made it 0.3% and promotions wait for about
  // twice the samples (measured in tools/simulate/README.md).
  double z = 1.163;
  // The swap test's pair form (policy/count_prior.h, "The pair test"):
  // under one prior, a candidate is also hotter than a victim when the
  // posterior probability that it is not is at most a, the bounds'
  // one-sided tail at z. Only for sources whose samples count accesses
  // (not fault sources, whose counts are capped at one per re-arm or scan
  // pass: the daemon's fairness guest, with write faults, kept 70-78 MiB
  // of the hotter member's 80 MiB hot set on DRAM with it, 74-80 without).
  bool pair_test = true;
  // A first detection opens the change window only when the fast tier's
  // pages cooled (file comment, "A change is confirmed by the fast tier's
  // pages cooling"), and victims rank by their long window while their
  // recent evidence does not contradict it (file comment, "The long window
  // ranks a victim"). Both only where samples count accesses.
  bool confirm_changes = true;
  bool rank_victims_by_long_window = true;
  // The short window is held back while the last rounds' swaps displaced
  // pages that then drew more samples than the pages promoted (file
  // comment, "Swaps that do not pay"). With shift_z > 0 and samples that
  // count accesses.
  bool hold_short_window_when_swaps_lose = true;
  // A victim's recency bound is taken at the family-wise tail while the
  // victims that the last rounds' swaps chose by their silence drew more
  // samples than their bounds allowed (file comment, "Silences that do not
  // hold"). Where samples count accesses.
  bool doubt_silences_that_do_not_hold = true;
  // The source's samples are slow-tier pages only: NUMA hint faults in the
  // kernel's tiering mode, which scans no top-tier page. Pages new since
  // the last round are then placed as they arrive (PlaceArrivals). `hotpage
  // attach --source hintfault` sets it.
  bool slow_tier_samples = false;
  // With slow_tier_samples: a page the engine demoted that faults again
  // within long_window_ns is no victim for the next long_window_ns (the
  // file comment, "A demotion a fault undoes").
  bool refault_protects = true;
  // With slow_tier_samples, where the kernel demotes on reclaim
  // (/sys/kernel/mm/numa/demotion_enabled): the engine offers no victims
  // and makes no watermark demotions; a candidate that finds no room is
  // promoted anyway and the target's reclaim demotes the pages its LRU
  // holds coldest (the file comment, "The kernel's LRU as the fast tier's
  // evidence"; PlacementInput::reclaim_makes_room). `hotpage attach
  // --source hintfault` sets it when demotion is enabled.
  bool reclaim_makes_room = false;
  // Hotness table capacity: twice the fast tier's 4 KiB pages
  // (ForFastTier) and at least footprint_pages plus a quarter, at most
  // max_table_entries. A table smaller than the process's footprint
  // displaces its coldest entries, and a cold page on the fast tier that
  // is not tracked can never be chosen for demotion: the watermark
  // demotions then fall on the tracked, warmer ones.
  size_t max_table_entries = size_t{1} << 22;
  // The managed process's resident 4 KiB pages, if known (attach: RSS at
  // start; simulate: the trace's footprint); 0: unknown.
  uint64_t footprint_pages = 0;
  // Size the table by footprint_pages alone (when known): footprint plus a
  // quarter, at least kMinFootprintTableEntries, never more than the
  // fast-tier sizing above. For an agent running an engine per process
  // (the daemon), where a small process needs no table for the whole fast
  // tier. Off (attach, simulate): the sizing above.
  bool table_by_footprint = false;
  static constexpr size_t kMinFootprintTableEntries = size_t{1} << 14;
  // Placement queries cost about 1 us per 4 KiB page live; at most this
  // many pages are queried per round.
  size_t max_placement_pages_per_round = size_t{1} << 20;
  // 4 KiB pages per MemoryView::QueryNodes call (whole keys: a 2 MiB
  // entry's 512 pages are never split over two calls); 0 counts as 1.
  // Every call pays a fixed cost besides its pages: live it is a
  // move_pages(2) with nodes == NULL, which looks up and access-checks the
  // target's mm (find_mm_struct, mm/migrate.c) and takes its mmap_lock
  // once per call. One call per key made a round's queries its largest
  // cost: in the TCG guest of tests/compare a round over 6144-7171 tracked
  // pages took 1.1-1.7 s (about 170-240 us per call), so the loop ran its
  // rounds 1-2 s late and starved the migrator of CPU. 1024 as the
  // migrator's batch (migrator/migrator.h: move_pages stops gaining past
  // 1024 pages per call). A stop (MemoryView::Interrupted) is seen between
  // calls.
  size_t placement_query_batch_pages = 1024;
  // Length of the scanner's lists. 0: enough for one round's byte budget
  // (PlacementConfig::max_move_bytes / 4 KiB), within [256, 65536].
  size_t top_k = 0;
  // Weight of every ingested sample (AccessSample::weight). A source that
  // samples a page once per long pass (hint faults: one per kernel scan
  // pass, 1-19 s apart) sets more than 1 so that one sample outlives the
  // epoch halvings before the next pass.
  uint16_t sample_weight = 1;
  // Moved entries remembered for the promotion-yield and demotion-regret
  // statistics (EngineCounters::yield_hits, regret_hits).
  size_t max_promoted_tracked = size_t{1} << 20;
  // Bring a round forward when the fast tier's share of samples drops (the
  // file comment). shift_z: one-sided normal quantile of the drop, checked
  // after every ingested batch (a sequential test: 3.09 is a 0.1% false
  // alarm rate per check, against the 5% of one decision). 0: off.
  double shift_z = 3.09;
  // Time constant of the long window (the file comment): each key's samples
  // weighted by exp(-age / long_window_ns). 10 s is ARMS' long moving
  // average (the shift detector's baseline uses the same). 0: off.
  uint64_t long_window_ns = 10000000000;
  // Pages never sampled on the fast tier (the file comment, "Pages the
  // table does not track"): each round that finds a fast node below its
  // high watermark, look for the process's pages there that the table
  // does not track and offer them as the coldest victims. Only for a
  // source that samples every access to every tier (PEBS, IBS, DAMON),
  // where no sample over the run bounds a page's rate; off for write
  // faults (reads unseen), hint faults (the slow tier only) and traces
  // (every page a trace holds was sampled).
  bool sweep_untracked_fast = false;
  // New pages that use up the room a round left on a fast node bring the
  // next round forward, a round of watermark demotions only (the file
  // comment, "New pages use up the room"). Off: they wait for the
  // schedule.
  bool room_rounds = true;
  // (Only for samples that count accesses: not for fault sources or
  // DAMON; the file comment, "A room round reads no table".)
  // The share of one core the room rule's extra rounds may cost: they come
  // at most every interval / 4, so at most 3 between two scheduled rounds,
  // and a room is armed only while 3 times the last room round's cost
  // (ObserveRoundCost after one; 0 before the first) is within this share
  // of the interval. A room round reads no table (the file comment): with
  // 1 s rounds (attach_round_benchmark BM_RoomRound, -c opt, 10.6k new
  // pages) it costs 10-12 ms CPU at 64k to 1M live entries, and arms at
  // every size; when it read the table, as a full round does (31, 82 and
  // 291 ms there), only tables below ~64k entries did. The simulator
  // reports no cost and always arms. The migrator's own budget is 0.25.
  double room_round_cpu_share = 0.1;
  // 4 KiB pages the sweep queries per round at most (MemoryView::
  // QueryNodes, in calls of placement_query_batch_pages); it resumes where
  // the last round stopped.
  size_t sweep_query_pages_per_round = size_t{1} << 14;
};

// What one round found and decided.
struct RoundReport {
  uint64_t round = 0;    // 1 for the first
  uint64_t time_ns = 0;  // the round's time (the caller's clock)
  bool epoch_advanced = false;
  // Brought forward: a shift, the start, an evidence burst, a saturated
  // slower tier or new pages that used up the room (file comment).
  bool early = false;
  // Brought forward only because new pages used up the room the last round
  // left on a fast node: the round promoted nothing (file comment, "New
  // pages use up the room").
  bool room_round = false;
  // The change window (file comment): its length in seconds when the
  // count prior was fitted to the samples since a detected change point
  // this round, else 0.
  double change_window_s = 0;
  // The samples the prior was fitted to in the change window: every
  // tracked key's samples since the change point, at full weight (0 when
  // the window is closed).
  uint64_t change_window_samples = 0;
  // Ping-pong holds the round ended (MemoryView::ReleaseHolds) because it
  // opened the change window.
  uint64_t released_holds = 0;
  // A detection this round did not open the change window: the fast tier's
  // pages had not cooled (file comment, "A change is confirmed").
  bool change_unconfirmed = false;
  // Swaps that do not pay (file comment): the samples drawn since their
  // swaps by the pages the last rounds promoted and by those they displaced
  // (sums decayed over the epoch; in samples), and whether the round's
  // candidates were ranked without the short window because of them.
  double swap_payoff_promoted = 0;
  double swap_payoff_displaced = 0;
  bool short_window_held = false;
  // Silences that do not hold (file comment): the samples drawn since their
  // swaps by the victims the last rounds chose by their silence, and what
  // their recency bounds allowed (sums decayed over the epoch; in samples),
  // and whether this round took the victims' recency bounds at the
  // family-wise tail because of them.
  double silence_observed = 0;
  double silence_claimed = 0;
  bool silences_doubted = false;
  // The view said Interrupted() during the placement queries: the round
  // stopped there and decided nothing (the decision is empty).
  bool interrupted = false;
  // The fast tier's share of the samples (of pages whose node was known)
  // since the previous round, and its long-run average before this round.
  double fast_share = 0;
  double fast_share_baseline = 0;
  // Benefit against cost (file comment): the horizon H in seconds, the
  // measured cost of one 4 KiB move in ns (0: not measured yet), and the
  // resulting margin in accesses per second.
  double horizon_s = 0;
  double migration_cost_ns = 0;
  double migration_margin_per_sec = 0;
  // With reclaim making room (EngineOptions::reclaim_makes_room): the
  // window in which two faults make a page `repeated` this round (file
  // comment, "The repeat window follows the LRU's characteristic time");
  // 0 otherwise.
  double repeat_window_s = 0;
  // The samples' rates only bound the access rates from below (a fault
  // source or DAMON, SamplesCountAccesses): the margin is 0, no move gated.
  bool rates_bound_accesses = false;
  // The swap test had its pair form this round (EngineOptions::pair_test,
  // and samples that count accesses), and the largest posterior probability
  // of a candidate not being hotter that it accepted: the bounds' tail, or
  // 1/2 while a slower tier is saturated (file comment, "The odds suffice
  // while a slower tier is saturated").
  bool pair_test = false;
  double pair_tail = 0;
  // The count prior was fitted as zero-truncated (file comment, "A prior
  // fitted to the table": the decayed counts in the table's first epoch).
  bool prior_zero_truncated = false;
  // Bandwidth (file comment): the loaded latencies of the fastest tier and
  // the next from this round's samples, and whether promotions were held.
  double fast_loaded_latency_ns = 0;
  double next_loaded_latency_ns = 0;
  // Their marginal latencies (policy/loaded_latency.h), which the rule
  // compares: the fast tier's at the left limit of the cap.
  double fast_marginal_latency_ns = 0;
  double next_marginal_latency_ns = 0;
  bool bandwidth_bound = false;
  // What the bandwidth rule asked of placement: the demand to shed off the
  // fast tier (0: none) and the marginal latency both tiers would then meet
  // at (0 when only a saturated node's excess is shed); the
  // demand promotions may add to the fast tier (the sum of its nodes'
  // headroom; infinity: no limit). What was shed is in
  // decision.shed_pages / shed_rate_per_sec.
  double shed_demand_bytes_per_sec = 0;
  double balanced_latency_ns = 0;
  double promote_headroom_bytes_per_sec =
      std::numeric_limits<double>::infinity();
  uint64_t live_entries = 0;
  uint32_t hot_threshold = 0;  // count at or above which a page is hot
  uint64_t hot_pages = 0;      // 4 KiB pages at or above the threshold
  std::map<int, uint64_t> hot_pages_by_node;
  // 4 KiB pages sampled since the previous round, whatever their count:
  // the working set this round saw (the daemon's demand; hot_pages is 0
  // while everything tracked fits in the fast tier, threshold 0).
  uint64_t active_pages = 0;
  // Untracked fast-tier pages offered as victims this round
  // (EngineOptions::sweep_untracked_fast), and the pages it queried.
  uint64_t untracked_victims = 0;
  uint64_t swept_pages = 0;
  PlacementDecision decision;
};

// Running totals.
struct EngineCounters {
  uint64_t samples = 0;
  uint64_t rounds = 0;
  uint64_t planned_promotions = 0;  // 4 KiB pages
  // Of them, planned by PlaceArrivals between rounds.
  uint64_t arrival_promotions = 0;
  // Demoted pages that faulted back within the long window, each then no
  // victim for one (EngineOptions::refault_protects).
  uint64_t refault_protections = 0;
  // Of planned_promotions, into a full node left to the kernel's reclaim
  // (EngineOptions::reclaim_makes_room).
  uint64_t reclaim_promotions = 0;
  // Promoted pages back on the slow tier within the long window, each then
  // left out of such promotions for one.
  uint64_t reclaim_returns = 0;
  // Rounds whose returns cut the repeat window (file comment).
  uint64_t repeat_window_cuts = 0;
  uint64_t planned_demotions = 0;
  // Whether the moves paid off, in samples. yield_hits: samples on entries
  // whose last move was a promotion, while on a fast node; regret_hits:
  // samples on entries whose last move was a demotion (not a bandwidth
  // shed, which moves hot pages on purpose), while off the fast nodes
  // (the node the last placement query found, or the planned move's
  // target until the next; a page not queried counts where its move
  // sent it). Their denominators: the entries that changed direction (a
  // first move, or a move back; the parts of a split entry moved the same
  // way count once). Entries past max_promoted_tracked are not followed.
  uint64_t promoted_entries = 0;
  uint64_t yield_hits = 0;
  uint64_t demoted_entries = 0;
  uint64_t regret_hits = 0;
  uint64_t early_rounds = 0;  // rounds brought forward (report.early)
  uint64_t burst_rounds = 0;  // of those, by an evidence burst
  // Of those, brought forward because new pages used up the room the last
  // round left on a fast node; they only demote (file comment, "New pages
  // use up the room").
  uint64_t room_rounds = 0;
  uint64_t change_window_rounds = 0;  // rounds with the change window open
  uint64_t released_holds = 0;        // ping-pong holds ended at change points
  // Detections that opened no change window: the fast tier had not cooled.
  uint64_t unconfirmed_changes = 0;
  // Rounds whose candidates were ranked without the short window: the
  // last rounds' swaps did not pay (RoundReport::short_window_held).
  uint64_t short_window_held_rounds = 0;
  // Rounds that took the victims' recency bounds at the family-wise tail:
  // the silences of the last rounds' victims did not hold
  // (RoundReport::silences_doubted).
  uint64_t silences_doubted_rounds = 0;
  // Rounds whose pair test accepted odds (tail 1/2): a slower tier was
  // saturated (file comment, "The odds suffice while a slower tier is
  // saturated").
  uint64_t odds_pair_rounds = 0;
  // Candidates whose lower bound came from the short window (since the
  // previous round) rather than the decayed count.
  uint64_t short_window_candidates = 0;
  // Victims ranked colder by the long window than by their other bounds
  // (the file comment).
  uint64_t long_window_victims = 0;
  // Candidates given a long-window prior lower bound (not cooling).
  uint64_t long_prior_candidates = 0;
  // Candidates whose lower bounds their silence since their last sample
  // capped: they stopped (the file comment, "A candidate that stopped").
  uint64_t stopped_candidates = 0;
  uint64_t untracked_victims = 0;  // RoundReport::untracked_victims, summed
  uint64_t swept_pages = 0;
  uint64_t bandwidth_bound_rounds = 0;  // rounds that held promotions
  uint64_t bandwidth_shed_rounds = 0;   // rounds that shed hot pages
  uint64_t planned_sheds = 0;  // 4 KiB pages shed (also in planned_demotions)
};

class PolicyEngine {
 public:
  // `topology` must outlive the engine. Errors: bad config for the machine
  // (ValidatePlacementConfig, MakeTargetStrategy), table creation.
  static absl::StatusOr<std::unique_ptr<PolicyEngine>> Create(
      const Topology& topology, const PlacementConfig& config,
      const EngineOptions& options);

  // Sets the clock origin: the first round is due at start + interval.
  void Start(uint64_t now_ns);

  // Converts and ingests samples (accessor node from the sample's CPU;
  // DAMON regions as 2 MiB entries of unknown accessor). Allocation-free
  // once the batch buffer has grown to the largest batch.
  void Ingest(absl::Span<const Sample> samples);

  // Whether a round is due at `now_ns`. Ingest() may bring the next round
  // forward (a detected shift): callers ask after every batch.
  bool RoundDue(uint64_t now_ns) const { return now_ns >= next_round_ns_; }
  uint64_t next_round_ns() const { return next_round_ns_; }

  // Runs one round at `now_ns` (see the file comment) and schedules the
  // next one at the first start + k * interval after `now_ns`. Ends by
  // refreshing the THP-backed chunks (RefreshHugeChunks).
  RoundReport RunRound(MemoryView& view, uint64_t now_ns);
  // Promotion on arrival (EngineOptions::slow_tier_samples; the file
  // comment, "Arrivals"). Whether pages new since the last round wait for
  // PlaceArrivals.
  bool ArrivalsPending() const {
    return options_.slow_tier_samples &&
           (arrivals_cursor_ < unknown_demand_.size() || !repeats_.empty());
  }
  // Between rounds, on the thread that ingests: the 4 KiB pages sampled
  // since the last round that no round has placed and no earlier call has
  // planned, promoted into room above a fast node's high watermark by the
  // round's placement rules (masks, bind ranges, holds, targets, budgets;
  // no victim, so no swap and no demotion). Their nodes are queried first;
  // free memory is projected past the queued moves. The caller hands the
  // decision's moves to its migrator. Empty without the option, while
  // bandwidth holds promotions, or with nothing new.
  PlacementDecision PlaceArrivals(MemoryView& view, uint64_t now_ns);
  // Whether a round due at `now_ns` should wait for the next batch of
  // samples: the PlaceArrivals call at this same `now_ns` planned moves,
  // so a burst of new pages is still arriving (a scan pass's faults), and
  // the round is due less than interval / 2 ago. The caller polls its
  // source again and asks anew; a batch that brings no new page (or no
  // room for one) lets the round run. Also while `moves_queued` (the
  // caller's migrator still holds moves to do) after PlaceArrivals planned
  // any since the last round: the round would take the CPU their copies
  // need and find the pages in flight. The file comment, "Arrivals".
  bool RoundWaitsForArrivals(uint64_t now_ns, bool moves_queued = false) const;

  // The migrator's running totals: pages it moved and the time it spent
  // (thread CPU), for the cost of one move (file comment). Totals only
  // grow; a call with fewer pages than before is ignored.
  void ObserveMigration(uint64_t moved_pages, uint64_t spent_ns);

  // What the last round cost the caller's thread (CPU time): a room
  // round's is the room rule's budget (EngineOptions::
  // room_round_cpu_share), a full round's is kept for the caller.
  void ObserveRoundCost(uint64_t spent_ns) {
    (last_was_room_round_ ? last_room_round_cost_ns_ : last_round_cost_ns_) =
        spent_ns;
  }
  uint64_t last_round_cost_ns() const { return last_round_cost_ns_; }
  uint64_t last_room_round_cost_ns() const { return last_room_round_cost_ns_; }

  // Learns the view's THP-backed chunks: until the next refresh, samples in
  // them are ingested as 2 MiB entries. Callers may call it before the
  // first round.
  void RefreshHugeChunks(MemoryView& view);
  size_t huge_chunks() const { return huge_chunks_.size(); }
  // Whether `vaddr` lies in a chunk the last refresh found THP-backed.
  bool InHugeChunk(uint64_t vaddr) const {
    return !huge_chunks_.empty() &&
           huge_chunks_.contains(vaddr & ~((uint64_t{1} << 21) - 1));
  }

  // Replaces the placement rules between rounds (the daemon's SIGHUP), the
  // hotness table and every learned estimate kept. Validated as Create()
  // validates; on error nothing changes. The weighted rotation restarts.
  // FailedPrecondition when the change would alter the scanner (locality,
  // max_move_bytes): those need a new engine.
  absl::Status Reconfigure(const PlacementConfig& config);

  // With table_by_footprint: the process now has `footprint_pages`
  // resident; if the table that footprint calls for (EngineOptions) has
  // more slots than this one, the table is replaced by one that size with
  // every entry kept (HotnessTable::CopyFrom) and the scanner restarted
  // over it. Only ever grows. Call between rounds on the thread that
  // ingests (nothing may use the table meanwhile); allocates. Returns
  // whether it grew. Without table_by_footprint: false.
  absl::StatusOr<bool> GrowTable(uint64_t footprint_pages);
  size_t table_capacity() const { return table_->capacity(); }

  const EngineCounters& counters() const { return counters_; }
  // The bytes the engine holds, by part (the table's slots, and each
  // container's capacity: a hash map's slots and control bytes), largest
  // first. Its own memory on the machine it manages (attach and the daemon
  // report it). Walks no entry; allocates the returned vector.
  struct MemoryPart {
    const char* name;
    uint64_t bytes;
  };
  std::vector<MemoryPart> MemoryBreakdown() const;
  uint64_t MemoryBytes() const;
  // EngineOptions::reclaim_makes_room in effect (it needs
  // slow_tier_samples).
  bool reclaim_makes_room() const { return ReclaimMakesRoom(); }
  // Sets EngineOptions::reclaim_makes_room, from the next round on: the
  // kernel's demotion_enabled changed while the engine ran (attach follows
  // the hint-fault watchdog's readings: FollowKernelDemotion). Every rule
  // that reads it does so per round or per sample; the repeat window keeps
  // its state. Not during a round (the owner's thread, between rounds).
  void SetReclaimMakesRoom(bool on);
  const PlacementConfig& config() const { return config_; }
  const Topology& topology() const { return topology_; }
  HotnessTable& table() { return *table_; }
  // Bytes of the fastest tier (the hot threshold's capacity).
  uint64_t fast_bytes() const { return fast_bytes_; }

 private:
  PolicyEngine(const Topology& topology, const PlacementConfig& config,
               const EngineOptions& options,
               std::unique_ptr<TargetStrategy> strategy,
               std::unique_ptr<HotnessTable> table, uint64_t fast_bytes);
  // Queries where entries_ live (nodes_, keys_' placement; the budget and
  // batches in EngineOptions); then exactly the keys found are placed.
  void RefreshPlacement(MemoryView& view);
  void QueryPlacement(MemoryView& view);
  bool IsFastNode(int node) const {
    return node >= 0 && node < static_cast<int>(is_fast_.size()) &&
           is_fast_[node];
  }
  // After a batch: brings the next round forward if the fast tier's share
  // of this round's samples dropped significantly (file comment).
  void CheckShift(uint64_t now_ns);
  // The start of the window a round at now_ns closes: the previous round,
  // else Start() (the first round may come early: CheckShift), else one
  // interval back.
  uint64_t WindowStartNs(uint64_t now_ns) const {
    if (last_round_ns_ != 0) return last_round_ns_;
    if (start_ns_ != 0 && start_ns_ < now_ns) return start_ns_;
    return now_ns > options_.interval_ns ? now_ns - options_.interval_ns : 0;
  }
  // The detector's test: the fast tier's share of the samples since the
  // last round is below the baseline by more than shift_z standard
  // deviations (false without a baseline or with too few samples).
  bool ShareDropped() const;
  // The rate of samples on pages the last round did not place, since it,
  // above the last window's rate of all samples by more than shift_z
  // Poisson standard deviations (at least kMinBurstSamples of them); only
  // for a source that sees no fast-tier page (share baseline 0 or none).
  bool NovelRateRose(uint64_t now_ns) const;
  static constexpr double kMinBurstSamples = 5;
  bool NoveltyRose() const;
  // Whether the samples since the last round are enough for that test
  // (a baseline, and n min(p, 1 - p) >= 5 for the normal approximation).
  // A round with too few (an early round a few batches after the last) says
  // nothing either way: it does not close the change window.
  bool ShareTestable() const;
  // Opens, keeps or closes the change window at a round (file comment);
  // `detected`: a shift was detected since the last round; `dropped`: the
  // round's whole window still shows the drop.
  void UpdateChangeWindow(bool detected, bool dropped, uint64_t prev_round_ns,
                          uint64_t now_ns);
  // Bandwidth (file comment). What the round asks of placement.
  struct BandwidthPlan {
    std::vector<NodeShed> shed;      // accesses per second, per fast node
    std::vector<NodeShed> headroom;  // per fast node; empty: no limit
    // A node of the next tier serves at least kMaxUtilisation of its peak
    // (file comment, "A saturated slower tier").
    bool next_saturated = false;
  };
  // Adds the samples of pages whose node was unknown at ingestion to the
  // nodes the fresh placement finds them on; a page with one sample in the
  // window counts where first touch puts a new page now (file comment,
  // "Pages sampled once"). `free`: the round's free memory.
  void AttributeUnknownDemand(absl::Span<const NodeFree> free);
  // Where first touch puts a page a CPU of `cpu_node` touches now: that
  // node if its free memory is at or above its low watermark, else the
  // nearest node (SLIT, then the lower id) that has such room; `cpu_node`
  // when none has.
  int FirstTouchNode(int cpu_node, absl::Span<const NodeFree> free) const;
  // This round's demand per node (over dt_ns) -> the latencies, the bound
  // state (with its hysteresis) and the plan; fills the report's fields.
  BandwidthPlan PlanBandwidth(uint64_t dt_ns, RoundReport& report);
  // The hottest pages (decayed count) on the nodes `plan` sheds from.
  void CollectShedCandidates(const ScanResult& scan, const BandwidthPlan& plan,
                             std::vector<PageHeat>* out);
  // A key's samples since the change point, in count units (the sum of its
  // per-round samples since then: since_change_).
  uint32_t CountSinceChange(uint64_t key) const;
  // A key's samples in the round CountRound last counted (keys_' counts),
  // 0 if it had none.
  uint32_t RoundSamples(uint64_t key) const;
  // The factor that decays a sum last decayed at `last_ns` (0: never) to
  // `now_ns` over the decayed count's epoch (interval x epoch_rounds).
  double EpochDecay(uint64_t last_ns, uint64_t now_ns) const;
  // Swaps that do not pay (file comment): adds the samples the last full
  // round's swap pairs drew in the round just counted (after CountRound)
  // to the decayed sums, and says whether the short window is held.
  bool WeighSwapPayoff(uint64_t now_ns, RoundReport& report);
  // Keeps the round's swap pairs (promoted entry, displaced entry) for the
  // next round's WeighSwapPayoff, and the victims it chose by their silence
  // (silence_claims_) for WeighSilences.
  void RememberSwapPairs(const PlacementDecision& d, uint64_t now_ns);
  // Silences that do not hold (file comment): adds the samples the last
  // full round's silence-bound victims drew in the round just counted, and
  // what their bounds allowed over the time since, to the decayed sums
  // (after CountRound), and sets silences_doubted_.
  void WeighSilences(uint64_t now_ns, RoundReport& report);
  // A victim's recency bound's numerator: U(0), or while silences are
  // doubted U(0) + ln M (file comment, "Silences that do not hold").
  double VictimZeroHi() const {
    return silences_doubted_ ? family_zero_hi_ : zero_count_hi_;
  }
  // The long window (file comment): decays every key's long count to
  // `now_ns` (forgetting those below 1%) and sets the effective window
  // (long_window_s_); erases the keys left with neither a long count nor a
  // count at the last counted round. One walk over keys_.
  void SweepKeyCounts(uint64_t now_ns, uint64_t prev_round_ns);
  // The round's per-key work, one walk over entries_ (after the placement
  // query and the scan; report.hot_threshold set), each key looked up once
  // per map: its samples since the previous round (keys_' counts: the
  // count now less the previous round's, halved by the epochs between;
  // exact: the table's decay is the same integer halving; 0 if not more; a
  // displaced and re-inserted entry undercounts; the short window) into the
  // long window's count (after SweepKeyCounts) and, while the change
  // window is open, into since_change_ (a sample counts at full weight
  // however many epochs have halved the table since; at most one entry per
  // table slot, a key past that left out, as a displaced entry
  // undercounts); the report's active and hot pages. Fits the
  // empirical-Bayes prior (policy/count_prior.h) to the keys' counts (in
  // the change window: their samples since the change point), which then
  // tightens a candidate's lower bound or a victim's upper bound to the
  // posterior's when that is the tighter (ApplyCountPrior), and long_prior_
  // to the keys' long counts. Returns the samples the count prior was
  // fitted to (in samples: count units over the source's sample weight).
  uint64_t CountRound(uint64_t now_ns, uint64_t prev_round_ns,
                      RoundReport& report);
  // A victim's upper bound from its long count `c` (long_counts_now_;
  // PageHeat::long_hi), unless its recent rate contradicts it.
  void ApplyLongWindow(double c, double period, PageHeat& h);
  // The long-window prior's bounds for a candidate (PageHeat::long_prior_lo)
  // or a victim (long_prior_hi) of long count `c`, unless the recent evidence
  // contradicts the long window: for a candidate `recent` is its recent upper
  // bound and a bound below the long lower one means it is cooling; for a
  // victim `recent` is its recent lower bound and one above the long upper
  // bound means it heated up.
  void ApplyLongPrior(double c, double period, bool candidate, double recent,
                      PageHeat& h);
  void ApplyCountPrior(uint32_t count, double period, double window_s,
                       bool candidate, PageHeat& h) const;
  // The sweep (EngineOptions::sweep_untracked_fast): appends to `victims`
  // the untracked pages it finds on fast nodes below their high watermark.
  void SweepUntracked(MemoryView& view, absl::Span<const NumaMapsRange> ranges,
                      absl::Span<const NodeFree> free, double period,
                      double window_s, uint64_t now_ns,
                      std::vector<PageHeat>* victims, RoundReport& report);

  const Topology& topology_;
  PlacementConfig config_;  // replaced only by Reconfigure()
  EngineOptions options_;   // footprint_pages updated by GrowTable()
  std::unique_ptr<TargetStrategy> strategy_;
  std::unique_ptr<HotnessTable> table_;
  // Remade over a new table by GrowTable (a scanner is bound to its table).
  std::optional<HotnessScanner> scanner_;
  const uint64_t fast_bytes_;
  std::vector<int> fast_nodes_;
  std::vector<int8_t> node_of_cpu_;
  const double zero_count_hi_;  // U(0): the upper limit of a zero count

  std::vector<bool> is_fast_;  // by node id
  uint64_t start_ns_ = 0;
  uint64_t next_round_ns_ = 0;
  uint64_t next_scheduled_ns_ = 0;  // start + k * interval
  uint64_t next_epoch_ns_ = 0;
  uint64_t last_round_ns_ = 0;  // 0: no round yet
  // Shift detector: samples since the last round on pages of known node,
  // and of those on the fast tier; the long-run share (< 0: none yet).
  uint64_t window_known_ = 0;
  uint64_t window_fast_ = 0;
  double share_baseline_ = -1;
  // Its variance over p (1 - p): the sum of w^2 / n over the windows it
  // averages (ShareFell in engine.cc).
  double share_baseline_var_ = 0;
  bool early_pending_ = false;
  // A round has run after samples were ingested: the start's change point
  // (CheckShift) is spent.
  bool sampled_round_ = false;
  // Evidence outpacing rounds (CheckShift): samples since the last round
  // on pages of unknown node (not placed at the last round), and what the
  // last round's window held at its rate over a whole interval. A burst
  // round opens no change window: nothing says the regime changed, only
  // that rounds lag.
  uint64_t window_novel_ = 0;
  double novel_baseline_ = -1;
  double last_window_per_interval_ = 0;
  uint64_t samples_at_last_round_ = 0;
  bool burst_pending_ = false;
  // The last round found the next tier saturated and brought this one
  // forward (file comment, "A saturated slower tier").
  bool saturation_pending_ = false;
  // New pages use up the room (file comment): the 4 KiB pages the last
  // round left free on each fast node (by node id, its projected free
  // memory after its moves; -1 or absent: not counted), the new pages
  // counted against it since, and whether they brought this round forward.
  // UseRoom counts a sample; ArmRoom sets the room after a decision.
  void UseRoom(uint64_t key, PageKind kind, int cpu_node, uint64_t now_ns);
  void ArmRoom(const RoundReport& report);
  // The room round (file comment, "A room round reads no table"): the
  // last full round's victims it did not move, less those sampled since,
  // and the new pages found on fast nodes, demoted to the watermarks.
  RoundReport RoomRound(MemoryView& view, RoundReport report);
  // Appends to room_victims_ the pages new since the last full round
  // (unknown_demand_'s keys no round placed) that are on a fast node, each
  // with the bounds a full round at `now_ns` gives its samples.
  void AddNewPageVictims(MemoryView& view, uint64_t now_ns);
  // What a placement between full rounds (PlaceArrivals, RoomRound) plans
  // against: the view's ranges, its free memory projected past the queued
  // moves, its backed-off nodes; and a PlacementInput over them (the
  // reading must outlive it; no candidate or victim yet).
  struct ViewReading {
    std::vector<NumaMapsRange> ranges;
    std::vector<NodeFree> free;
    std::vector<int> backed_off;
  };
  static ViewReading ReadView(MemoryView& view);
  PlacementInput InputOver(const ViewReading& reading, MemoryView& view) const;
  // The table key of this process's entry at `vaddr` of `entry_bytes`
  // (over 4 KiB: its 2 MiB entry).
  PageKey EntryKey(uint64_t vaddr, uint64_t entry_bytes) const;
  // Drops from victims_ the pages `d` moves.
  void DropMovedVictims(const PlacementDecision& d);
  // "A demotion a fault undoes" (file comment): a sample of a page the
  // engine demoted within the long window protects it; victims drops the
  // protected pages (and both maps their expired entries).
  void NoteRefault(uint64_t vaddr, uint64_t time_ns);
  // With reclaim making room: entry `key`, promoted (promoted_at_), was
  // sampled at `time_ns` on the slow tier.
  void NoteReturn(uint64_t key, uint64_t time_ns);
  // EngineOptions::reclaim_makes_room, which needs slow_tier_samples.
  bool ReclaimMakesRoom() const {
    return options_.reclaim_makes_room && options_.slow_tier_samples;
  }
  void DropProtectedVictims(uint64_t now_ns, std::vector<PageHeat>* victims);
  // A round's planned moves: the counters, promotions (RecordPromotion) and
  // their ends (the horizon's deaths), and the placement of each moved
  // entry, at its target until the next round queries it.
  void ApplyPlannedMoves(const PlacementDecision& d, uint64_t now_ns);
  // The last full round's report without its decision: what a room round
  // reports beside its own moves (the loop's stats read it every round).
  RoundReport last_full_;
  std::vector<PageHeat> room_victims_;
  std::vector<std::pair<uint64_t, int>> room_keys_;  // key, sampling node
  std::vector<uint64_t> room_pages_new_;
  std::vector<uint32_t> room_counts_new_;
  std::vector<int> room_accessors_new_;
  std::vector<int> room_nodes_new_;
  std::vector<uint64_t> moved_scratch_;
  uint64_t last_room_round_ns_ = 0;
  // The CPU of the last room round (ObserveRoundCost after one), for the
  // budget: 0 until one ran.
  uint64_t last_room_round_cost_ns_ = 0;
  bool last_was_room_round_ = false;
  // The mean idle latency of `nodes` (0 for none): a tier's latency when
  // it serves no demand.
  double MeanIdleLatencyNs(const std::vector<int>& nodes) const;
  std::vector<double> room_pages_;
  // The new pages seen since the last round (UseRoom's linear counting):
  // a bit per hashed key, and how many bits are set.
  std::vector<uint64_t> room_seen_bits_;
  uint64_t room_seen_set_ = 0;
  bool room_pending_ = false;
  uint64_t last_round_cost_ns_ = 0;  // ObserveRoundCost
  // Change window: its start (0: closed) and every key's samples since
  // then (in count units; keys without samples absent), summed round by
  // round from the exact per-round differences (CountRound).
  uint64_t change_ns_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> since_change_;
  // The shift detector's tallies since the change point (a second change,
  // UpdateChangeWindow).
  uint64_t change_fast_ = 0;
  uint64_t change_known_ = 0;
  // A change point this round that still needs the fast tier's cooling to
  // stand (UpdateChangeWindow sets it, CountRound tests it), and the last
  // change point that had it (0: none).
  bool change_on_trial_ = false;
  std::vector<uint64_t> decayed_histogram_;  // CountRound, on trial
  uint64_t confirmed_change_ns_ = 0;
  // Victims may rank by their long window this round (no confirmed change
  // within it; samples count accesses).
  bool rank_by_long_window_ = false;
  // Swaps that do not pay (file comment): the last full round's swap pairs
  // as entry keys (promoted, displaced), and the decayed sums of the
  // samples such pairs drew after their swaps, as of payoff_ns_.
  std::vector<std::pair<uint64_t, uint64_t>> swap_pairs_;
  absl::flat_hash_map<uint64_t, uint64_t> demoted_keys_;  // scratch
  double payoff_promoted_ = 0;
  double payoff_displaced_ = 0;
  uint64_t payoff_ns_ = 0;
  // Silences that do not hold. This round's victims whose upper bound came
  // from their silence: vaddr -> (entry key, the rate the bound allowed, in
  // samples/s); those its swaps displaced, kept for the next round; the
  // decayed sums (samples) and when they were last decayed; when the swaps
  // were planned; whether this round doubts silences; U(0) + ln M for the
  // round (M: the tracked entries on fast nodes, from CountRound).
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, double>> silence_claims_;
  std::vector<std::pair<uint64_t, double>> silence_victims_;
  double silence_observed_ = 0;
  double silence_claimed_ = 0;
  uint64_t silence_ns_ = 0;
  uint64_t silence_swaps_ns_ = 0;
  bool silences_doubted_ = false;
  double family_zero_hi_ = 0;
  // Bandwidth: accesses (sample periods) per node since the last round.
  LoadedLatencyModel latency_model_;
  std::vector<double> window_accesses_;  // by node id
  // Samples of pages of unknown node since the last round, for
  // AttributeUnknownDemand (capacity fixed at construction: past it a
  // sample counts on its fallback node at once, as before).
  struct UnknownDemand {
    uint64_t key = 0;
    int fallback_node = -1;  // the sampling CPU's node (first touch)
    double accesses = 0;
  };
  std::vector<UnknownDemand> unknown_demand_;
  // reclaim_makes_room: keys placed by a round sampled again with a long
  // count at least repeat_bar_ (a second fault within the repeat window),
  // for PlaceArrivals; bounded like unknown_demand_.
  std::vector<uint64_t> repeats_;
  // The repeat window (file comment, "The repeat window follows the LRU's
  // characteristic time") and the fault's weight in the long count after
  // it, exp(-window / long window): a long count before a fault at least
  // repeat_bar_, or one after it at least 1 + repeat_bar_, holds two faults
  // within the window (PageHeat::repeated). The shortest age of the returns
  // since the last round, UINT64_MAX for none.
  static constexpr uint64_t kMinRepeatWindowNs = 1000000000;
  uint64_t repeat_window_ns_ = 0;
  double repeat_bar_ = 0;
  uint64_t round_min_return_age_ns_ = UINT64_MAX;
  // Cuts or grows the repeat window for the round at now_ns (the previous
  // at prev_round_ns, 0 for none) and sets repeat_bar_.
  void AdaptRepeatWindow(uint64_t prev_round_ns, uint64_t now_ns,
                         RoundReport& report);
  std::vector<int> next_tier_nodes_;
  bool bandwidth_bound_ = false;
  // Benefit against cost.
  double latency_gap_ns_ = 0;  // fastest tier vs the next, read latency
  // A sample whose period does not count accesses was ingested
  // (SamplesCountAccesses): no margin from then on.
  bool rates_bound_accesses_ = false;
  // "A demotion a fault undoes" (file comment): 4 KiB page number -> when
  // the engine demoted it; -> until when it is no victim. Pruned each round
  // of entries older than the long window, so bounded by the pages demoted
  // (or protected) within one.
  absl::flat_hash_map<uint64_t, uint64_t> demoted_at_;
  absl::flat_hash_map<uint64_t, uint64_t> protected_until_;
  // Entries the kernel's reclaim sent back within a long window of their
  // promotion -> until when no promotion left to reclaim takes them
  // (EngineOptions::reclaim_makes_room).
  absl::flat_hash_map<uint64_t, uint64_t> reclaim_held_until_;
  // Page-fault samples were ingested: watermark demotions are off (file
  // comment, "Watermark demotions need a full view").
  bool fault_samples_ = false;
  uint64_t observed_pages_ = 0;
  uint64_t observed_ns_ = 0;
  absl::flat_hash_map<uint64_t, uint64_t> promoted_at_;  // key -> time
  double exposure_s_ = 0;  // promoted pages' time on the fast tier so far
  uint64_t deaths_ = 0;    // promoted pages demoted since
  EngineCounters counters_;
  // Ingest's converted samples, handed to the table in pieces of at most
  // kIngestPieceSamples (128 KiB; a multiple of the table's chunk, so the
  // pieces count as one batch: HotnessTable::IngestPart). Before, it grew
  // to the caller's largest batch and kept that: 128 bytes per entry in
  // attach_round_benchmark, whose 4 samples per entry come in one call.
  static constexpr size_t kIngestPieceSamples = 4096;
  static_assert(kIngestPieceSamples % HotnessTable::kChunk == 0);
  std::vector<AccessSample> batch_;
  // Packed keys of entries a round moved, by the direction of their last
  // move: true promoted, false demoted (the yield and regret statistics;
  // at most max_promoted_tracked).
  absl::flat_hash_map<uint64_t, bool> moved_by_rounds_;
  absl::flat_hash_set<uint64_t> huge_chunks_;  // THP-backed 2 MiB chunk starts
  // The sweep's place: the address it resumes at (0: the first range).
  uint64_t sweep_cursor_ = 0;
  std::vector<uint64_t> sweep_pages_;
  std::vector<int> sweep_status_;
  // Per round: the table's live entries (in slot order), where each lives
  // (the node of the majority of its 4 KiB pages; -1: not known) by key and
  // by index into entries_, and its tier (the scanner's pass). Kept across
  // rounds so that a round allocates only when the table holds more.
  std::vector<EntryView> entries_;
  uint32_t placement_round_ = 0;
  std::vector<int> nodes_;
  std::vector<Tier> tiers_;
  // By index into entries_ (CountRound): the samples since the previous
  // round (RoundSamples) and, with the long prior on, the long count (0
  // otherwise).
  std::vector<uint32_t> round_samples_;
  std::vector<float> long_counts_now_;
  // The round's lists for placement (PlacementInput), kept across rounds.
  std::vector<PageHeat> candidates_, victims_, hot_on_fast_, shed_candidates_;
  // Per key, in one map (a key is looked up once a round; no map is
  // rebuilt), two records that were two maps (a placement map and a counts
  // map, with the same keys in the main: one 32-byte slot instead of a 16-
  // and a 24-byte one, 66 bytes per tracked key instead of 84 at absl's
  // load after growth).
  //
  // Its placement (placed(): what a placement map held): where the last
  // RefreshPlacement found the entry (the node of the majority of its
  // 4 KiB pages; a planned move's target until the next round queries it),
  // valid if `placed_round` is that round's placement_round_.
  // RefreshPlacement sets every other key's placed_round to the round
  // before, so a stale stamp never comes round again.
  //
  // Its counts (has_counts(): what a counts map held; kNoRound: none): its
  // count at the round CountRound last counted (counted_round_, a round
  // number, truncated, never kNoRound) and the samples it added in that
  // round (the short window), valid if `round` is that round; and its long
  // window count: its samples, exponentially weighted by age, in samples
  // (kNoLongCount: none; at most one per table slot: long_keys_ counts
  // them). SweepKeyCounts drops the counts of a key with neither.
  //
  // A key with neither placement nor counts is erased (RefreshPlacement,
  // SweepKeyCounts). The table epoch at the last counted round; the
  // effective long window this round (0: none yet, or off).
  struct KeyState {
    static constexpr float kNoLongCount = -1;
    static constexpr uint32_t kNoRound = UINT32_MAX;
    uint32_t count = 0;
    uint32_t samples = 0;
    uint32_t round = kNoRound;
    float long_count = kNoLongCount;
    int node = -1;
    uint32_t placed_round = 0;
    bool has_counts() const { return round != kNoRound; }
    // Drops the counts (their long count is already none).
    void DropCounts() {
      count = samples = 0;
      round = kNoRound;
    }
  };
  static_assert(sizeof(std::pair<const uint64_t, KeyState>) == 32);
  absl::flat_hash_map<uint64_t, KeyState> keys_;
  // The key's state if the last RefreshPlacement placed it, else null.
  KeyState* FindPlaced(uint64_t key) {
    auto it = keys_.find(key);
    return it != keys_.end() && it->second.placed_round == placement_round_
               ? &it->second
               : nullptr;
  }
  bool IsPlaced(uint64_t key) const {
    auto it = keys_.find(key);
    return it != keys_.end() && it->second.placed_round == placement_round_;
  }
  uint32_t counted_round_ = 0;
  size_t long_keys_ = 0;
  uint32_t prev_epoch_ = 0;
  double long_window_s_ = 0;
  // A planned promotion of the entry `key` at `now_ns`: the yield set
  // (moved_by_rounds_) and the horizon's start (promoted_at_), each bounded by
  // max_promoted_tracked. RunRound and PlaceArrivals.
  void RecordPromotion(uint64_t key, uint64_t now_ns);
  // A planned demotion of the entry `key` (not a shed): the regret set.
  void RecordDemotion(uint64_t key);
  // PlaceArrivals: unknown_demand_ read up to here since the last round, the
  // keys it planned since then, and its scratch.
  size_t arrivals_cursor_ = 0;
  // When PlaceArrivals last planned a move (RoundWaitsForArrivals); max:
  // never.
  uint64_t arrivals_placed_ns_ = std::numeric_limits<uint64_t>::max();
  absl::flat_hash_set<uint64_t> arrived_;
  std::vector<uint64_t> arrival_pages_;
  std::vector<int> arrival_nodes_;
  std::vector<int> arrival_accessors_;
  std::vector<PageHeat> arrival_heat_;
  CountPrior prior_;
  std::vector<uint64_t> prior_histogram_;
  std::vector<uint64_t> long_histogram_;  // the long prior's
  // The long window's prior (file comment): fitted to the long counts of
  // the tracked keys each round.
  CountPrior long_prior_;
  std::vector<uint64_t> query_pages_;
  std::vector<int> query_status_;
  // Rule L's memory of sharing (file comment, "Sharing is remembered"):
  // each key last read as shared, with that round's time; with --locality
  // only. At most one per table entry seen shared in the long window.
  void RememberShared(uint64_t now_ns);
  absl::flat_hash_map<uint64_t, uint64_t> shared_seen_;
  // Rule L's evidence (file comment, "Evidence that a page is private"):
  // updates the score of each key on the fast tier from the round's
  // entries_ and sets private_samples_ (by index into entries_); erases the
  // other keys. With --locality only.
  void WeighPrivateEvidence();
  struct PrivateEvidence {
    float score = 0;       // in home samples, in [-m, m]
    uint32_t count = 0;    // the entry's count at the last walk (weight units)
    uint32_t walk = 0;     // evidence_walk_ of the last walk that saw it
    uint16_t foreign = 0;  // its foreign count then (< 2^14)
    uint8_t home = 0;      // its home node then (< 63)
  };
  absl::flat_hash_map<uint64_t, PrivateEvidence> private_evidence_;
  std::vector<uint32_t> private_samples_;  // PageHeat::samples, by index
  uint32_t evidence_walk_ = 0;
  uint32_t evidence_epoch_ = 0;  // the table's epoch at the last walk
};

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_ENGINE_H_
