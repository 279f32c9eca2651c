"""Map a chunk function over the lines of a text file, in order, in this process or in spawned
workers: the shared driver of the Moses tokeniser/truecaser and the sentencepiece encoder, whose
multi-million-line corpora are worth spreading over the CPUs."""

import multiprocessing


def chunks(f, size):
    """Lists of at most ``size`` lines of the text file ``f``, without their newlines."""
    chunk = []
    for line in f:
        chunk.append(line.rstrip("\n"))
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def map_file(initializer, init_arg, run_chunk, src, dst, workers, chunk_size):
    """Write ``run_chunk(lines)`` for every chunk of SRC to DST, one output line per input line.

    ``initializer(init_arg)`` sets up, in every worker (or here when ``workers <= 1``), the state
    ``run_chunk`` reads; both must be module-level functions, as spawned workers import them.
    """
    with open(src, encoding="utf-8", newline="\n") as fin, open(dst, "w", encoding="utf-8", newline="\n") as fout:
        if workers <= 1:
            initializer(init_arg)
            _write(fout, map(run_chunk, chunks(fin, chunk_size)))
        else:
            with multiprocessing.get_context("spawn").Pool(workers, initializer, (init_arg,)) as pool:
                # imap keeps the order of the chunks.
                _write(fout, pool.imap(run_chunk, chunks(fin, chunk_size), chunksize=1))


def _write(fout, results):
    for lines in results:
        fout.writelines(line + "\n" for line in lines)
