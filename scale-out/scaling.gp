# Drawn by scalelab from scaling.dat; edit and run `gnuplot scaling.gp` in this folder.
set title 'Scaling efficiency 92.1% at 2 ranks (AMD EPYC, 2 logical CPUs, load average up to 1.7)'
set xlabel 'ranks'
set ylabel 'images/sec (all ranks)'
set grid
set key below maxcols 2
set bmargin 5
set yrange [0:*]
set xtics (1, 2)
set offsets graph 0.05, graph 0.05, 0, 0
set style data linespoints
set terminal svg size 900,560 dynamic enhanced font 'Sans,12' background rgb 'white'
set output 'scaling.svg'
plot 'scaling.dat' index 0 using 1:2 title 'measured' linewidth 2 linecolor rgb '#0072b2' dashtype 1 pointtype 7 pointsize 1, \
     'scaling.dat' index 1 using 1:2 title 'ideal (linear from 1 rank)' linewidth 2 linecolor rgb '#d55e00' dashtype 1 pointtype 8 pointsize 1
set terminal pngcairo size 900,560 enhanced font 'Sans,11'
set output 'scaling.png'
replot
unset output
