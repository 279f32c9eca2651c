Entonces llamando á sus doce discípulos, les dió potestad contra los espíritus inmundos, para que los echasen fuera, y sanasen toda enfermedad y toda dolencia.
Y los nombres de los doce apóstoles son estos: el primero, Simón, que es dicho Pedro, y Andrés su hermano; Jacobo, hijo de Zebedeo, y Juan su hermano;
Felipe, y Bartolomé; Tomás, y Mateo el publicano; Jacobo hijo de Alfeo, y Lebeo, por sobrenombre Tadeo;
Simón el Cananita y Judas Iscariote, que también le entregó.
A estos doce envió Jesús, á los cuales dió mandamiento, diciendo: Por el camino de los Gentiles no iréis, y en ciudad de Samaritanos no entréis;
Mas id antes á las ovejas perdidas de la casa de Israel.
Y yendo, predicad, diciendo: El reino de los cielos se ha acercado.
Sanad enfermos, limpiad leprosos, resucitad muertos, echad fuera demonios: de gracia recibisteis, dad de gracia.
No aprestéis oro, ni plata, ni cobre en vuestras bolsas;
Ni alforja para el camino, ni dos ropas de vestir, ni zapatos, ni bordón; porque el obrero digno es de su alimento.
Mas en cualquier ciudad, ó aldea donde entrareis, investigad quién sea en ella digno, y reposad allí hasta que salgáis.
Y entrando en la casa, saludadla.
Y si la casa fuere digna, vuestra paz vendrá sobre ella; mas si no fuere digna, vuestra paz se volverá á vosotros.
Y cualquiera que no os recibiere, ni oyere vuestras palabras, salid de aquella casa ó ciudad, y sacudid el polvo de vuestros pies.
De cierto os digo, que el castigo será más tolerable á la tierra de los de Sodoma y de los de Gomorra en el día del juicio, que á aquella ciudad.
He aquí, yo os envío como á ovejas en medio de lobos: sed pues prudentes como serpientes, y sencillos como palomas.
Y guardaos de los hombres: porque os entregarán en concilios, y en sus sinagogas os azotarán;
Y aun á príncipes y á reyes seréis llevados por causa de mí, por testimonio á ellos y á los Gentiles.
Mas cuando os entregaren, no os apuréis por cómo ó qué hablaréis; porque en aquella hora os será dado qué habéis de hablar.
Porque no sois vosotros los que habláis, sino el Espíritu de vuestro Padre que habla en vosotros.
Y el hermano entregará al hermano á la muerte, y el padre al hijo; y los hijos se levantarán contra los padres, y los harán morir.
Y seréis aborrecidos de todos por mi nombre; mas el que soportare hasta el fin, éste será salvo.
Mas cuando os persiguieren en esta ciudad, huid á la otra: porque de cierto os digo, que no acabaréis de andar todas las ciudades de Israel, que no venga el Hijo del hombre.
El discípulo no es más que su maestro, ni el siervo más que su señor.
Bástale al discípulo ser como su maestro, y al siervo como su señor. Si al padre de la familia llamaron Beelzebub, ¿cuánto más á los de su casa?
Así que, no los temáis; porque nada hay encubierto, que no haya de ser manifestado; ni oculto, que no haya de saberse.
Lo que os digo en tinieblas, decidlo en la luz; y lo que oís al oído predicadlo desde los terrados.
Y no temáis á los que matan el cuerpo, mas al alma no pueden matar: temed antes á aquel que puede destruir el alma y el cuerpo en el infierno.
¿No se venden dos pajarillos por un cuarto? Con todo, ni uno de ellos cae á tierra sin vuestro Padre.
Pues aun vuestros cabellos están todos contados.
Así que, no temáis: más valéis vosotros que muchos pajarillos.
Cualquiera pues, que me confesare delante de los hombres, le confesaré yo también delante de mi Padre que está en los cielos.
Y cualquiera que me negare delante de los hombres, le negaré yo también delante de mi Padre que está en los cielos.
No penséis que he venido para meter paz en la tierra: no he venido para meter paz, sino espada.
Porque he venido para hacer disensión del hombre contra su padre, y de la hija contra su madre, y de la nuera contra su suegra.
Y los enemigos del hombre serán los de su casa.
El que ama padre ó madre más que á mí, no es digno de mí; y el que ama hijo ó hija más que á mí, no es digno de mí.
Y el que no toma su cruz, y sigue en pos de mí, no es digno de mí.
El que hallare su vida, la perderá; y el que perdiere su vida por causa de mí, la hallará.
El que os recibe á vosotros, á mí recibe; y el que á mí recibe, recibe al que me envió.
El que recibe profeta en nombre de profeta, merced de profeta recibirá; y el que recibe justo en nombre de justo, merced de justo recibirá.
Y cualquiera que diere á uno de estos pequeñitos un vaso de agua fría solamente, en nombre de discípulo, de cierto os digo, que no perderá su recompensa.
Porque el reino de los cielos es semejante á un hombre, padre de familia, que salió por la mañana á ajustar obreros para su viña.
Y habiéndose concertado con los obreros en un denario al día, los envió á su viña.
Y saliendo cerca de la hora de las tres, vió otros que estaban en la plaza ociosos;
Y les dijo: Id también vosotros á mi viña, y os daré lo que fuere justo. Y ellos fueron.
Salió otra vez cerca de las horas sexta y nona, é hizo lo mismo.
Y saliendo cerca de la hora undécima, halló otros que estaban ociosos; y díceles: ¿Por qué estáis aquí todo el día ociosos?
Dícenle: Porque nadie nos ha ajustado. Díceles: Id también vosotros á la viña, y recibiréis lo que fuere justo.
Y cuando fué la tarde del día, el señor de la viña dijo á su mayordomo: Llama á los obreros y págales el jornal, comenzando desde los postreros hasta los primeros.
Y viniendo los que habían ido cerca de la hora undécima, recibieron cada uno un denario.
Y viniendo también los primeros, pensaron que habían de recibir más; pero también ellos recibieron cada uno un denario.
Y tomándolo, murmuraban contra el padre de la familia,
Diciendo: Estos postreros sólo han trabajado una hora, y los has hecho iguales á nosotros, que hemos llevado la carga y el calor del día.
Y él respondiendo, dijo á uno de ellos: Amigo, no te hago agravio; ¿no te concertaste conmigo por un denario?
Toma lo que es tuyo, y vete; mas quiero dar á este postrero, como á ti.
¿No me es lícito á mí hacer lo que quiero con lo mío? ó ¿es malo tu ojo, porque yo soy bueno?
Así los primeros serán postreros, y los postreros primeros: porque muchos son llamados, mas pocos escogidos.
Y subiendo Jesús á Jerusalem, tomó sus doce discípulos aparte en el camino, y les dijo:
He aquí subimos á Jerusalem, y el Hijo del hombre será entregado á los príncipes de los sacerdotes y á los escribas, y le condenarán á muerte;
Y le entregarán á los Gentiles para que le escarnezcan, y azoten, y crucifiquen; mas al tercer día resucitará.
Entonces se llegó á él la madre de los hijos de Zebedeo con sus hijos, adorándo le, y pidiéndole algo.
Y él le dijo: ¿Qué quieres? Ella le dijo: Di que se sienten estos dos hijos míos, el uno á tu mano derecha, y el otro á tu izquierda, en tu reino.
Entonces Jesús respondiendo, dijo: No sabéis lo que pedís: ¿podéis beber el vaso que yo he de beber, y ser bautizados del bautismo de que yo soy bautizado? Y ellos le dicen: Podemos.
Y él les dice: A la verdad mi vaso beberéis, y del bautismo de que yo soy bautizado, seréis bautizados; mas el sentaros á mi mano derecha y á mi izquierda, no es mío dar lo, sino á aquellos para quienes está aparejado de mi Padre.
Y como los diez oyeron esto, se enojaron de los dos hermanos.
Entonces Jesús llamándolos, dijo: Sabéis que los príncipes de los Gentiles se enseñorean sobre ellos, y los que son grandes ejercen sobre ellos potestad.
Mas entre vosotros no será así; sino el que quisiere entre vosotros hacerse grande, será vuestro servidor;
Y el que quisiere entre vosotros ser el primero, será vuestro siervo:
Como el Hijo del hombre no vino para ser servido, sino para servir, y para dar su vida en rescate por muchos.
Entonces saliendo ellos de Jericó, le seguía gran compañía.
Y he aquí dos ciegos sentados junto al camino, como oyeron que Jesús pasaba, clamaron, diciendo: Señor, Hijo de David, ten misericordia de nosotros.
Y la gente les reñía para que callasen; mas ellos clamaban más, diciendo: Señor, Hijo de David, ten misericordia de nosotros.
Y parándose Jesús, los llamó, y dijo: ¿Qué queréis que haga por vosotros?
Ellos le dicen: Señor, que sean abiertos nuestros ojos.
Entonces Jesús, teniendo misericordia de ellos, les tocó los ojos, y luego sus ojos recibieron la vista; y le siguieron.
Y entró otra vez en Capernaum después de algunos días, y se oyó que estaba en casa.
Y luego se juntaron á él muchos, que ya no cabían ni aun á la puerta; y les predicaba la palabra.
Entonces vinieron á él unos trayendo un paralítico, que era traído por cuatro.
Y como no podían llegar á él á causa del gentío, descubrieron el techo de donde estaba, y haciendo abertura, bajaron el lecho en que yacía el paralítico.
Y viendo Jesús la fe de ellos, dice al paralítico: Hijo, tus pecados te son perdonados.
Y estaban allí sentados algunos de los escribas, los cuales pensando en sus corazones,
Decían: ¿Por qué habla éste así? Blasfemias dice. ¿Quién puede perdonar pecados, sino solo Dios?
Y conociendo luego Jesús en su espíritu que pensaban así dentro de sí mismos, les dijo: ¿Por qué pensáis estas cosas en vuestros corazones?
¿Qué es más fácil, decir al paralítico: Tus pecados te son perdonados, ó decirle: Levántate, y toma tu lecho y anda?
Pues para que sepáis que el Hijo del hombre tiene potestad en la tierra de perdonar los pecados, (dice al paralítico):
A ti te digo: Levántate, y toma tu lecho, y vete á tu casa.
Entonces él se levantó luego, y tomando su lecho, se salió delante de todos, de manera que todos se asombraron, y glorificaron á Dios, diciendo: Nunca tal hemos visto.
Y volvió á salir á la mar, y toda la gente venía á él, y los enseñaba.
Y pasando, vió á Leví, hijo de Alfeo, sentado al banco de los públicos tributos, y le dice: Sígueme. Y levantándose le siguió.
Y aconteció que estando Jesús á la mesa en casa de él, muchos publicanos y pecadores estaban también á la mesa juntamente con Jesús y con sus discípulos: porque había muchos, y le habían seguido.
Y los escribas y los Fariseos, viéndole comer con los publicanos y con los pecadores, dijeron á sus discípulos: ¿Qué es esto, que él come y bebe con los publicanos y con los pecadores?
Y oyéndolo Jesús, les dice: Los sanos no tienen necesidad de médico, mas los que tienen mal. No he venido á llamar á los justos, sino á los pecadores.
Y los discípulos de Juan, y de los Fariseos ayunaban; y vienen, y le dicen: ¿Por qué los discípulos de Juan y los de los Fariseos ayunan, y tus discípulos no ayunan?
Y Jesús les dice: ¿Pueden ayunar los que están de bodas, cuando el esposo está con ellos? Entre tanto que tienen consigo al esposo no pueden ayunar.
Mas vendrán días, cuando el esposo les será quitado, y entonces en aquellos días ayunarán.
Nadie echa remiendo de paño recio en vestido viejo; de otra manera el mismo remiendo nuevo tira del viejo, y la rotura se hace peor.
Ni nadie echa vino nuevo en odres viejos; de otra manera, el vino nuevo rompe los odres, y se derrama el vino, y los odres se pierden; mas el vino nuevo en odres nuevos se ha de echar.
Y aconteció que pasando él por los sembrados en sábado, sus discípulos andando comenzaron á arrancar espigas.
Entonces los Fariseos le dijeron: He aquí, ¿por qué hacen en sábado lo que no es lícito?
Y él les dijo: ¿Nunca leísteis qué hizo David cuando tuvo necesidad, y tuvo hambre, él y los que con él estaban:
Cómo entró en la casa de Dios, siendo Abiathar sumo pontífice, y comió los panes de la proposición, de los cuales no es lícito comer sino á los sacerdotes, y aun dió á los que con él estaban?
También les dijo: El sábado por causa del hombre es hecho; no el hombre por causa del sábado.
Así que el Hijo del hombre es Señor aun del sábado.
Y comenzó á hablarles por parábolas: Plantó un hombre una viña, y la cercó con seto, y cavó un lagar, y edificó una torre, y la arrendó á labradores, y se partió lejos.
Y envió un siervo á los labradores, al tiempo, para que tomase de los labradores del fruto de la viña.
Mas ellos, tomándole, le hirieron, y le enviaron vacío.
Y volvió á enviarles otro siervo; mas apedreándole, le hirieron en la cabeza, y volvieron á enviarle afrentado.
Y volvió á enviar otro, y á aquél mataron; y á otros muchos, hiriendo á unos y matando á otros.
Teniendo pues aún un hijo suyo amado, enviólo también á ellos el postrero, diciendo: Tendrán en reverencia á mi hijo.
Mas aquellos labradores dijeron entre sí: Este es el heredero; venid, matémosle, y la heredad será nuestra.
Y prendiéndole, le mataron, y echaron fuera de la viña.
¿Qué, pues, hará el señor de la viña? Vendrá, y destruirá á estos labradores, y dará su viña á otros.
¿Ni aun esta Escritura habéis leído: La piedra que desecharon los que edificaban, ésta es puesta por cabeza de esquina;
Por el Señor es hecho esto, y es cosa maravillosa en nuestros ojos?
Y procuraban prenderle, porque entendían que decía á ellos aquella parábola; mas temían á la multitud; y dejándole, se fueron.
Y envían á él algunos de los Fariseos y de los Herodianos, para que le sorprendiesen en alguna palabra.
Y viniendo ellos, le dicen: Maestro, sabemos que eres hombre de verdad, y que no te cuidas de nadie; porque no miras á la apariencia de hombres, antes con verdad enseñas el camino de Dios: ¿Es lícito dar tributo á César, ó no? ¿Daremos, ó no daremos?
Entonces él, como entendía la hipocresía de ellos, les dijo: ¿Por qué me tentáis? Traedme la moneda para que la vea.
Y ellos se la trajeron y les dice: ¿Cúya es esta imagen y esta inscripción? Y ellos le dijeron: De César.
Y respondiendo Jesús, les dijo: Dad lo que es de César á César; y lo que es de Dios, á Dios. Y se maravillaron de ello.
Entonces vienen á él los Saduceos, que dicen que no hay resurrección, y le preguntaron, diciendo:
Maestro, Moisés nos escribió, que si el hermano de alguno muriese, y dejase mujer, y no dejase hijos, que su hermano tome su mujer, y levante linaje á su hermano.
Fueron siete hermanos: y el primero tomó mujer, y muriendo, no dejó simiente;
Y la tomó el segundo, y murió, y ni aquél tampoco dejó simiente; y el tercero, de la misma manera.
Y la tomaron los siete, y tampoco dejaron simiente: á la postre murió también la mujer.
En la resurrección, pues, cuando resucitaren, ¿de cuál de ellos será mujer? porque los siete la tuvieron por mujer.
Entonces respondiendo Jesús, les dice: ¿No erráis por eso, porque no sabéis las Escrituras, ni la potencia de Dios?
Porque cuando resucitarán de los muertos, ni se casarán, ni serán dados en casamiento, mas son como los ángeles que están en los cielos.
Y de que los muertos hayan de resucitar, ¿no habéis leído en el libro de Moisés cómo le habló Dios en la zarza, diciendo: Yo soy el Dios de Abraham, y el Dios de Isaac, y el Dios de Jacob?
No es Dios de muertos, mas Dios de vivos; así que vosotros mucho erráis.
Y llegándose uno de los escribas, que los había oído disputar, y sabía que les había respondido bien, le preguntó: ¿Cuál es el primer mandamiento de todos?
Y Jesús le respondió: El primer mandamiento de todos es: Oye, Israel, el Señor nuestro Dios, el Señor uno es.
Amarás pues al Señor tu Dios de todo tu corazón, y de toda tu alma, y de toda tu mente, y de todas tus fuerzas; este es el principal mandamiento.
Y el segundo es semejante á él: Amarás á tu prójimo como á ti mismo. No hay otro mandamiento mayor que éstos.
Entonces el escriba le dijo: Bien, Maestro, verdad has dicho, que uno es Dios, y no hay otro fuera de él;
Y que amarle de todo corazón, y de todo entendimiento, y de toda el alma, y de todas las fuerzas, y amar al prójimo como á sí mismo, más es que todos los holocaustos y sacrificios.
Jesús entonces, viendo que había respondido sabiamente, le dice: No estás lejos del reino de Dios. Y ya ninguno osaba preguntarle.
Y respondiendo Jesús decía, enseñando en el templo: ¿Cómo dicen los escribas que el Cristo es hijo de David?
Porque el mismo David dijo por el Espíritu Santo: Dijo el Señor á mi Señor: Siéntate á mi diestra, hasta que ponga tus enemigos por estrado de tus pies.
Luego llamándole el mismo David Señor, ¿de dónde, pues, es su hijo? Y los que eran del común del pueblo le oían de buena gana.
Y les decía en su doctrina: Guardaos de los escribas, que quieren andar con ropas largas, y aman las salutaciones en las plazas,
Y las primeras sillas en las sinagogas, y los primeros asientos en las cenas;
Que devoran las casas de las viudas, y por pretexto hacen largas oraciones. Estos recibirán mayor juicio.
Y estando sentado Jesús delante del arca de la ofrenda, miraba cómo el pueblo echaba dinero en el arca: y muchos ricos echaban mucho.
Y como vino una viuda pobre, echó dos blancas, que son un maravedí.
Entonces llamando á sus discípulos, les dice: De cierto os digo que esta viuda pobre echó más que todos los que han echado en el arca:
Porque todos han echado de lo que les sobra; mas ésta, de su pobreza echó todo lo que tenía, todo su alimento.
Y aconteció que pasando él por los sembrados en un sábado segundo del primero, sus discípulos arrancaban espigas, y comían, restregándolas con las manos.
Y algunos de los Fariseos les dijeron: ¿Por qué hacéis lo que no es lícito hacer en los sábados?
Y respondiendo Jesús les dijo: ¿Ni aun esto habéis leído, qué hizo David cuando tuvo hambre, él, y los que con él estaban;
Cómo entró en la casa de Dios, y tomó los panes de la proposición, y comió, y dió también á los que estaban con él, los cuales no era lícito comer, sino á solos los sacerdotes?
Y les decía: El Hijo del hombre es Señor aun del sábado.
Y aconteció también en otro sábado, que él entró en la sinagoga y enseñaba; y estaba allí un hombre que tenía la mano derecha seca.
Y le acechaban los escribas y los Fariseos, si sanaría en sábado, por hallar de qué le acusasen.
Mas él sabía los pensamientos de ellos; y dijo al hombre que tenía la mano seca: Levántate, y ponte en medio. Y él levantándose, se puso en pie.
Entonces Jesús les dice: Os preguntaré una cosa: ¿Es lícito en sábados hacer bien, ó hacer mal? ¿salvar la vida, ó quitarla?
Y mirándolos á todos alrededor, dice al hombre: Extiende tu mano. Y él lo hizo así, y su mano fué restaurada.
Y ellos se llenaron de rabia; y hablaban los unos á los otros qué harían á Jesús.
Y aconteció en aquellos días, que fué al monte á orar, y pasó la noche orando á Dios.
Y como fué de día, llamó á sus discípulos, y escogió doce de ellos, á los cuales también llamó apóstoles:
A Simón, al cual también llamó Pedro, y á Andrés su hermano, Jacobo y Juan, Felipe y Bartolomé,
Mateo y Tomás, Jacobo hijo de Alfeo, y Simón el que se llama Celador,
Judas hermano de Jacobo, y Judas Iscariote, que también fué el traidor.
Y descendió con ellos, y se paró en un lugar llano, y la compañía de sus discípulos, y una grande multitud de pueblo de toda Judea y de Jerusalem, y de la costa de Tiro y de Sidón, que habían venido á oirle, y para ser sanados de sus enfermedades;
Y los que habían sido atormentados de espíritus inmundos: y estaban curados.
Y toda la gente procuraba tocarle; porque salía de él virtud, y sanaba á todos.
Y alzando él los ojos á sus discípulos, decía: Bienaventurados vosotros los pobres; porque vuestro es el reino de Dios.
Bienaventurados los que ahora tenéis hambre; porque seréis saciados. Bienaventurados los que ahora lloráis, porque reiréis.
Bienaventurados seréis, cuando los hombres os aborrecieren, y cuando os apartaren de sí, y os denostaren, y desecharen vuestro nombre como malo, por el Hijo del hombre.
Gozaos en aquel día, y alegraos; porque he aquí vuestro galardón es grande en los cielos; porque así hacían sus padres á los profetas.
Mas ¡ay de vosotros, ricos! porque tenéis vuestro consuelo.
¡Ay de vosotros, los que estáis hartos! porque tendréis hambre. ¡Ay de vosotros, los que ahora reís! porque lamentaréis y lloraréis.
¡Ay de vosotros, cuando todos los hombres dijeren bien de vosotros! porque así hacían sus padres á los falsos profetas.
Mas á vosotros los que oís, digo: Amad á vuestros enemigos, haced bien á los que os aborrecen;
Bendecid á los que os maldicen, y orad por los que os calumnian.
Y al que te hiriere en la mejilla, dale también la otra; y al que te quitare la capa, ni aun el sayo le defiendas.
Y á cualquiera que te pidiere, da; y al que tomare lo que es tuyo, no vuelvas á pedir.
Y como queréis que os hagan los hombres, así hacedles también vosotros:
Porque si amáis á los que os aman, ¿qué gracias tendréis? porque también los pecadores aman á los que los aman.
Y si hiciereis bien á los que os hacen bien, ¿qué gracias tendréis? porque también los pecadores hacen lo mismo.
Y si prestareis á aquellos de quienes esperáis recibir, ¿qué gracias tendréis? porque también los pecadores prestan á los pecadores, para recibir otro tanto.
Amad, pues, á vuestros enemigos, y haced bien, y prestad, no esperando de ello nada; y será vuestro galardón grande, y seréis hijos del Altísimo: porque él es benigno para con los ingratos y malos.
Sed pues misericordiosos, como también vuestro Padre es misericordioso.
No juzguéis, y no seréis juzgados: no condenéis, y no seréis condenados: perdonad, y seréis perdonados.
Dad, y se os dará; medida buena, apretada, remecida, y rebosando darán en vuestro seno: porque con la misma medida que midiereis, os será vuelto á medir.
Y les decía una parábola: ¿Puede el ciego guiar al ciego? ¿No caerán ambos en el hoyo?
El discípulo no es sobre su maestro; mas cualquiera que fuere como el maestro, será perfecto.
¿Por qué miras la paja que está en el ojo de tu hermano, y la viga que está en tu propio ojo no consideras?
¿O cómo puedes decir á tu hermano: Hermano, deja, echaré fuera la paja que está en tu ojo, no mirando tú la viga que está en tu ojo? Hipócrita, echa primero fuera de tu ojo la viga, y entonces verás bien para sacar la paja que está en el ojo de tu hermano.
Porque no es buen árbol el que da malos frutos; ni árbol malo el que da buen fruto.
Porque cada árbol por su fruto es conocido: que no cogen higos de los espinos, ni vendimian uvas de las zarzas.
El buen hombre del buen tesoro de su corazón saca bien; y el mal hombre del mal tesoro de su corazón saca mal; porque de la abundancia del corazón habla su boca.
¿Por qué me llamáis, Señor, Señor, y no hacéis lo que digo?
Todo aquel que viene á mí, y oye mis palabras, y las hace, os enseñaré á quién es semejante:
Semejante es al hombre que edifica una casa, el cual cavó y ahondó, y puso el fundamento sobre la peña; y cuando vino una avenida, el río dió con ímpetu en aquella casa, mas no la pudo menear: porque estaba fundada sobre la peña.
Mas el que oyó y no hizo, semejante es al hombre que edificó su casa sobre tierra, sin fundamento; en la cual el río dió con ímpetu, y luego cayó; y fué grande la ruina de aquella casa.
Y dijo también á sus discípulos: Había un hombre rico, el cual tenía un mayordomo, y éste fué acusado delante de él como disipador de sus bienes.
Y le llamó, y le dijo: ¿Qué es esto que oigo de ti? Da cuenta de tu mayordomía, porque ya no podrás más ser mayordomo.
Entonces el mayordomo dijo dentro de sí: ¿Qué haré? que mi señor me quita la mayordomía. Cavar, no puedo; mendigar, tengo vergüenza.
Yo sé lo que haré para que cuando fuere quitado de la mayordomía, me reciban en sus casas.
Y llamando á cada uno de los deudores de su señor, dijo al primero: ¿Cuánto debes á mi señor?
Y él dijo: Cien barriles de aceite. Y le dijo: Toma tu obligación, y siéntate presto, y escribe cincuenta.
Después dijo á otro: ¿Y tú, cuánto debes? Y él dijo: Cien coros de trigo. Y él le dijo: Toma tu obligación, y escribe ochenta.
Y alabó el señor al mayordomo malo por haber hecho discretamente; porque los hijos de este siglo son en su generación más sagaces que los hijos de luz.
Y yo os digo: Haceos amigos de las riquezas de maldad, para que cuando faltareis, os reciban en las moradas eternas.
El que es fiel en lo muy poco, también en lo más es fiel: y el que en lo muy poco es injusto, también en lo más es injusto.
Pues si en las malas riquezas no fuisteis fieles, ¿quién os confiará lo verdadero?
Y si en lo ajeno no fuisteis fieles, ¿quién os dará lo que es vuestro?
Ningún siervo puede servir á dos señores; porque ó aborrecerá al uno y amará al otro, ó se allegará al uno y menospreciará al otro. No podéis servir á Dios y á las riquezas.
Y oían también todas estas cosas los Fariseos, los cuales eran avaros, y se burlaban de él.
Y díjoles: Vosotros sois los que os justificáis á vosotros mismos delante de los hombres; mas Dios conoce vuestros corazones; porque lo que los hombres tienen por sublime, delante de Dios es abominación.
La ley y los profetas hasta Juan: desde entonces el reino de Dios es anunciado, y quienquiera se esfuerza á entrar en él.
Empero más fácil cosa es pasar el cielo y la tierra, que frustrarse un tilde de la ley.
Cualquiera que repudia á su mujer, y se casa con otra, adultera: y el que se casa con la repudiada del marido, adultera.
Había un hombre rico, que se vestía de púrpura y de lino fino, y hacía cada día banquete con esplendidez.
Había también un mendigo llamado Lázaro, el cual estaba echado á la puerta de él, lleno de llagas,
Y deseando hartarse de las migajas que caían de la mesa del rico; y aun los perros venían y le lamían las llagas.
Y aconteció que murió el mendigo, y fué llevado por los ángeles al seno de Abraham: y murió también el rico, y fué sepultado.
Y en el infierno alzó sus ojos, estando en los tormentos, y vió á Abraham de lejos, y á Lázaro en su seno.
Entonces él, dando voces, dijo: Padre Abraham, ten misericordia de mí, y envía á Lázaro que moje la punta de su dedo en agua, y refresque mi lengua; porque soy atormentado en esta llama.
Y díjole Abraham: Hijo, acuérdate que recibiste tus bienes en tu vida, y Lázaro también males; mas ahora éste es consolado aquí, y tú atormentado.
Y además de todo esto, una grande sima está constituída entre nosotros y vosotros, que los que quisieren pasar de aquí á vosotros, no pueden, ni de allá pasar acá.
Y dijo: Ruégote pues, padre, que le envíes á la casa de mi padre;
Porque tengo cinco hermanos; para que les testifique, porque no vengan ellos también á este lugar de tormento.
Y Abraham le dice: A Moisés y á los profetas tienen: óiganlos.
El entonces dijo: No, padre Abraham: mas si alguno fuere á ellos de los muertos, se arrepentirán.
Mas Abraham le dijo: Si no oyen á Moisés y á los profetas, tampoco se persuadirán, si alguno se levantare de los muertos.
Y al tercer día hiciéronse unas bodas en Caná de Galilea; y estaba allí la madre de Jesús.
Y fué también llamado Jesús y sus discípulos á las bodas.
Y faltando el vino, la madre de Jesús le dijo: Vino no tienen.
Y dícele Jesús: ¿Qué tengo yo contigo, mujer? aun no ha venido mi hora.
Su madre dice á los que servían: Haced todo lo que os dijere.
Y estaban allí seis tinajuelas de piedra para agua, conforme á la purificación de los Judíos, que cabían en cada una dos ó tres cántaros.
Díceles Jesús: Henchid estas tinajuelas de agua. E hinchiéronlas hasta arriba.
Y díceles: Sacad ahora, y presentad al maestresala. Y presentáron le.
Y como el maestresala gustó el agua hecha vino, que no sabía de dónde era (mas lo sabían los sirvientes que habían sacado el agua), el maestresala llama al esposo,
Y dícele: Todo hombre pone primero el buen vino, y cuando están satisfechos, entonces lo que es peor; mas tú has guardado el buen vino hasta ahora.
Este principio de señales hizo Jesús en Caná de Galilea, y manifestó su gloria; y sus discípulos creyeron en él.
Después de esto descendió á Capernaum, él, y su madre, y hermanos, y discípulos; y estuvieron allí no muchos días.
Y estaba cerca la Pascua de los Judíos; y subió Jesús á Jerusalem.
Y halló en el templo á los que vendían bueyes, y ovejas, y palomas, y á los cambiadores sentados.
Y hecho un azote de cuerdas, echólos á todos del templo, y las ovejas, y los bueyes; y derramó los dineros de los cambiadores, y trastornó las mesas;
Y á los que vendían las palomas, dijo: Quitad de aquí esto, y no hagáis la casa de mi Padre casa de mercado.
Entonces se acordaron sus discípulos que está escrito: El celo de tu casa me comió.
Y los Judíos respondieron, y dijéronle: ¿Qué señal nos muestras de que haces esto?
Respondió Jesús, y díjoles: Destruid este templo, y en tres días lo levantaré.
Dijeron luego los Judíos: En cuarenta y seis años fué este templo edificado, ¿y tú en tres días lo levantarás?
Mas él hablaba del templo de su cuerpo.
Por tanto, cuando resucitó de los muertos, sus discípulos se acordaron que había dicho esto; y creyeron á la Escritura, y á la palabra que Jesús había dicho.
Y estando en Jerusalem en la Pascua, en el día de la fiesta, muchos creyeron en su nombre, viendo las señales que hacía.
Mas el mismo Jesús no se confiaba á sí mismo de ellos, porque él conocía á todos,
Y no tenía necesidad que alguien le diese testimonio del hombre; porque él sabía lo que había en el hombre.
Y jesús, seis días antes de la Pascua, vino á Bethania, donde estaba Lázaro, que había sido muerto, al cual había resucitado de los muertos.
E hiciéronle allí una cena: y Marta servía, y Lázaro era uno de los que estaban sentados á la mesa juntamente con él.
Entonces María tomó una libra de ungüento de nardo líquido de mucho precio, y ungió los pies de Jesús, y limpió sus pies con sus cabellos: y la casa se llenó del olor del ungüento.
Y dijo uno de sus discípulos, Judas Iscariote, hijo de Simón, el que le había de entregar:
¿Por qué no se ha vendido este ungüento por trescientos dineros, y se dió á los pobres?
Mas dijo esto, no por el cuidado que él tenía de los pobres; sino porque era ladrón, y tenía la bolsa, y traía lo que se echaba en ella.
Entonces Jesús dijo: Déjala: para el día de mi sepultura ha guardado esto;
Porque á los pobres siempre los tenéis con vosotros, mas á mí no siempre me tenéis.
Entonces mucha gente de los Judíos entendió que él estaba allí; y vinieron no solamente por causa de Jesús, mas también por ver á Lázaro, al cual había resucitado de los muertos.
Consultaron asimismo los príncipes de los sacerdotes, de matar también á Lázaro;
Porque muchos de los Judíos iban y creían en Jesús por causa de él.
El siguiente día, mucha gente que había venido á la fiesta, como oyeron que Jesús venía á Jerusalem,
Tomaron ramos de palmas, y salieron á recibirle, y clamaban: ¡Hosanna, Bendito el que viene en el nombre del Señor, el Rey de Israel!
Y halló Jesús un asnillo, y se sentó sobre él, como está escrito:
No temas, hija de Sión: he aquí tu Rey viene, sentado sobre un pollino de asna.
Estas cosas no las entendieron sus discípulos de primero: empero cuando Jesús fué glorificado, entonces se acordaron de que estas cosas estaban escritas de él, y que le hicieron estas cosas.
Y la gente que estaba con él, daba testimonio de cuando llamó á Lázaro del sepulcro, y le resucitó de los muertos.
Por lo cual también había venido la gente á recibirle, porque había oído que él había hecho esta señal;
Mas los Fariseos dijeron entre sí: ¿Veis que nada aprovecháis? he aquí, el mundo se va tras de él.
Y había ciertos Griegos de los que habían subido á adorar en la fiesta:
Estos pues, se llegaron á Felipe, que era de Bethsaida de Galilea, y rogáronle, diciendo: Señor, querríamos ver á Jesús.
Vino Felipe, y díjolo á Andrés: Andrés entonces, y Felipe, lo dicen á Jesús.
Entonces Jesús les respondió, diciendo: La hora viene en que el Hijo del hombre ha de ser glorificado.
De cierto, de cierto os digo, que si el grano de trigo no cae en la tierra y muere, él solo queda; mas si muriere, mucho fruto lleva.
El que ama su vida, la perderá; y el que aborrece su vida en este mundo, para vida eterna la guardará.
Si alguno me sirve, sígame: y donde yo estuviere, allí también estará mi servidor. Si alguno me sirviere, mi Padre le honrará.
Ahora está turbada mi alma; ¿y qué diré? Padre, sálvame de esta hora. Mas por esto he venido en esta hora.
Padre, glorifica tu nombre. Entonces vino una voz del cielo: Y lo he glorificado, y lo glorificaré otra vez.
Y la gente que estaba presente, y había oído, decía que había sido trueno. Otros decían: Angel le ha hablado.
Respondió Jesús, y dijo: No ha venido esta voz por mi causa, mas por causa de vosotros.
Ahora es el juicio de este mundo: ahora el príncipe de este mundo será echado fuera.
Y yo, si fuere levantado de la tierra, á todos traeré á mí mismo.
Y esto decía dando á entender de qué muerte había de morir.
Respondióle la gente: Nosotros hemos oído de la ley, que el Cristo permanece para siempre: ¿cómo pues dices tú: Conviene que el Hijo del hombre sea levantado? ¿Quién es este Hijo del hombre?
Entonces Jesús les dice: Aun por un poco estará la luz entre vosotros: andad entre tanto que tenéis luz, porque no os sorprendan las tinieblas; porque el que anda en tinieblas, no sabe dónde va.
Entre tanto que tenéis la luz, creed en la luz, para que seáis hijos de luz. Estas cosas habló Jesús, y fuése, y escondióse de ellos.
Empero habiendo hecho delante de ellos tantas señales, no creían en él.
Para que se cumpliese el dicho que dijo el profeta Isaías: ¿Señor, quién ha creído á nuestro dicho? ¿y el brazo del Señor, á quién es revelado?
Por esto no podían creer, porque otra vez dijo Isaías:
Cegó los ojos de ellos, y endureció su corazón; porque no vean con los ojos, y entiendan de corazón, y se conviertan, y yo los sane.
Estas cosas dijo Isaías cuando vió su gloria, y habló de él.
Con todo eso, aun de los príncipes, muchos creyeron en él; mas por causa de los Fariseos no lo confesaban, por no ser echados de la sinagoga.
Porque amaban más la gloria de los hombres que la gloria de Dios.
Mas Jesús clamó y dijo: El que cree en mí, no cree en mí, sino en el que me envió;
Y el que me ve, ve al que me envió.
Yo la luz he venido al mundo, para que todo aquel que cree en mí no permanezca en tinieblas.
Y el que oyere mis palabras, y no las creyere, yo no le juzgo; porque no he venido á juzgar al mundo, sino á salvar al mundo.
El que me desecha, y no recibe mis palabras, tiene quien le juzgue: la palabra que he hablado, ella le juzgará en el día postrero.
Porque yo no he hablado de mí mismo: mas el Padre que me envió, él me dió mandamiento de lo que he de decir, y de lo que he de hablar.
Y sé que su mandamiento es vida eterna: así que, lo que yo hablo, como el Padre me lo ha dicho, así hablo.
En el primer tratado, oh Teófilo, he hablado de todas las cosas que Jesús comenzó á hacer y á enseñar,
Hasta el día en que, habiendo dado mandamientos por el Espíritu Santo á los apóstoles que escogió, fué recibido arriba;
A los cuales, después de haber padecido, se presentó vivo con muchas pruebas indubitables, apareciéndoles por cuarenta días, y hablándo les del reino de Dios.
Y estando juntos, les mandó que no se fuesen de Jerusalem, sino que esperasen la promesa del Padre, que oísteis, dijo, de mí.
Porque Juan á la verdad bautizó con agua, mas vosotros seréis bautizados con el Espíritu Santo no muchos días después de estos.
Entonces los que se habían juntado le preguntaron, diciendo: Señor, ¿restituirás el reino á Israel en este tiempo?
Y les dijo: No toca á vosotros saber los tiempos ó las sazones que el Padre puso en su sola potestad;
Mas recibiréis la virtud del Espíritu Santo que vendrá sobre vosotros; y me sereís testigos en Jerusalem, y en toda Judea, y Samaria, y hasta lo último de la tierra.
Y habiendo dicho estas cosas, viéndo lo ellos, fué alzado; y una nube le recibió y le quitó de sus ojos.
Y estando con los ojos puestos en el cielo, entre tanto que él iba, he aquí dos varones se pusieron junto á ellos en vestidos blancos;
Los cuales también les dijeron: Varones Galileos, ¿qué estáis mirando al cielo? este mismo Jesús que ha sido tomado desde vosotros arriba en el cielo, así vendrá como le habéis visto ir al cielo.
Entonces se volvieron á Jerusalem del monte que se llama del Olivar, el cual está cerca de Jerusalem camino de un sábado.
Y entrados, subieron al aposento alto, donde moraban Pedro y Jacobo, y Juan y Andrés, Felipe y Tomás, Bartolomé y Mateo, Jacobo hijo de Alfeo, y Simón Zelotes, y Judas hermano de Jacobo.
Todos éstos perseveraban unánimes en oración y ruego, con las mujeres, y con María la madre de Jesús, y con sus hermanos.
Y en aquellos días, Pedro, levantándose en medio de los hermanos, dijo (y era la compañía junta como de ciento y veinte en número):
Varones hermanos, convino que se cumpliese la Escritura, la cual dijo antes el Espíritu Santo por la boca de David, de Judas, que fué guía de los que prendieron á Jesús;
El cuál era contado con nosotros, y tenía suerte en este ministerio.
Este, pues, adquirió un campo del salario de su iniquidad, y colgándose, reventó por medio, y todas sus entrañas se derramaron.
Y fué notorio á todos los moradores de Jerusalem; de tal manera que aquel campo es llamado en su propia lengua, Acéldama, que es, Campo de sangre.
Porque está escrito en el libro de los salmos: Sea hecha desierta su habitación, y no haya quien more en ella; y: Tome otro su obispado.
Conviene, pues, que de estos hombres que han estado juntos con nosotros todo el tiempo que el Señor Jesús entró y salió entre nosotros,
Comenzando desde el bautismo de Juan, hasta el día que fué recibido arriba de entre nosotros, uno sea hecho testigo con nosotros de su resurrección.
Y señalaron á dos: á José, llamado Barsabas, que tenía por sobrenombre Justo, y á Matías.
Y orando, dijeron: Tú, Señor, que conoces los corazones de todos, muestra cuál escoges de estos dos,
Para que tome el oficio de este ministerio y apostolado, del cual cayó Judas por transgresión, para irse á su lugar.
Y les echaron suertes, y cayó la suerte sobre Matías; y fué contado con los once apóstoles.
Y oyeron los apóstoles y los hermanos que estaban en Judea, que también los Gentiles habían recibido la palabra de Dios.
Y como Pedro subió á Jerusalem, contendían contra él los que eran de la circuncisión,
Diciendo: ¿Por qué has entrado á hombres incircuncisos, y has comido con ellos?
Entonces comenzando Pedro, les declaró por orden lo pasado, diciendo:
Estaba yo en la ciudad de Joppe orando, y vi en rapto de entendimiento una visión: un vaso, como un gran lienzo, que descendía, que por los cuatro cabos era abajado del cielo, y venía hasta mí.
En el cual como puse los ojos, consideré y vi animales terrestres de cuatro pies, y fieras, y reptiles, y aves del cielo.
Y oí una voz que me decía: Levántate, Pedro, mata y come.
Y dije: Señor, no; porque ninguna cosa común ó inmunda entró jamás en mi boca.
Entonces la voz me respondió del cielo segunda vez: Lo que Dios limpió, no lo llames tú común.
Y esto fué hecho por tres veces: y volvió todo á ser tomado arriba en el cielo.
Y he aquí, luego sobrevinieron tres hombres á la casa donde yo estaba, enviados á mí de Cesarea.
Y el Espíritu me dijo que fuese con ellos sin dudar. Y vinieron también conmigo estos seis hermanos, y entramos en casa de un varón,
El cual nos contó cómo había visto un ángel en su casa, que se paró, y le dijo: Envía á Joppe, y haz venir á un Simón que tiene por sobrenombre Pedro;
El cual te hablará palabras por las cuales serás salvo tú, y toda tu casa.
Y como comencé á hablar, cayó el Espíritu Santo sobre ellos también, como sobre nosotros al principio.
Entonces me acordé del dicho del Señor, como dijo: Juan ciertamente bautizó en agua; mas vosotros seréis bautizados en Espíritu Santo.
Así que, si Dios les dió el mismo don también como á nosotros que hemos creído en el Señor Jesucristo, ¿quién era yo que pudiese estorbar á Dios?
Entonces, oídas estas cosas, callaron, y glorificaron á Dios, diciendo: De manera que también á los Gentiles ha dado Dios arrepentimiento para vida.
Y los que habían sido esparcidos por causa de la tribulación que sobrevino en tiempo de Esteban, anduvieron hasta Fenicia, y Cipro, y Antioquía, no hablando á nadie la palabra, sino sólo á los Judíos.
Y de ellos había unos varones Ciprios y Cirenenses, los cuales como entraron en Antioquía, hablaron á los Griegos, anunciando el evangelio del Señor Jesús.
Y la mano del Señor era con ellos: y creyendo, gran número se convirtió al Señor.
Y llegó la fama de estas cosas á oídos de la iglesia que estaba en Jerusalem: y enviaron á Bernabé que fuese hasta Antioquía.
El cual, como llegó, y vió la gracia de Dios, regocijóse; y exhortó á todos á que permaneciesen en el propósito del corazón en el Señor.
Porque era varón bueno, y lleno de Espíritu Santo y de fe: y mucha compañía fué agregada al Señor.
Después partió Bernabé á Tarso á buscar á Saulo; y hallado, le trajo á Antioquía.
Y conversaron todo un año allí con la iglesia, y enseñaron á mucha gente; y los discípulos fueron llamados Cristianos primeramente en Antioquía.
Y en aquellos días descendieron de Jerusalem profetas á Antioquía.
Y levantándose uno de ellos, llamado Agabo, daba á entender por Espíritu, que había de haber una grande hambre en toda la tierra habitada: la cual hubo en tiempo de Claudio.
Entonces los discípulos, cada uno conforme á lo que tenía, determinaron enviar subsidio á los hermanos que habitaban en Judea:
Lo cual asimismo hicieron, enviándolo á los ancianos por mano de Bernabé y de Saulo.
Y habiendo partido de ellos, navegamos y vinimos camino derecho á Coos, y al día siguiente á Rhodas, y de allí á Pátara.
Y hallando un barco que pasaba á Fenicia, nos embarcamos, y partimos.
Y como avistamos á Cipro, dejándola á mano izquierda, navegamos á Siria, y vinimos á Tiro: porque el barco había de descargar allí su carga.
Y nos quedamos allí siete días, hallados los discípulos, los cuales decían á Pablo por Espíritu, que no subiese á Jerusalem.
Y cumplidos aquellos días, salimos acompañándonos todos, con sus mujeres é hijos, hasta fuera de la ciudad; y puestos de rodillas en la ribera, oramos.
Y abrazándonos los unos á los otros, subimos al barco, y ellos se volvieron á sus casas.
Y nosotros, cumplida la navegación, vinimos de Tiro á Tolemaida; y habiendo saludado á los hermanos, nos quedamos con ellos un día.
Y otro día, partidos Pablo y los que con él estábamos, vinimos á Cesarea: y entrando en casa de Felipe el evangelista, el cual era uno de los siete, posamos con él.
Y éste tenía cuatro hijas, doncellas, que profetizaban.
Y parando nosotros allí por muchos días, descendió de Judea un profeta, llamado Agabo;
Y venido á nosotros, tomó el cinto de Pablo, y atándose los pies y las manos, dijo: Esto dice el Espíritu Santo: Así atarán los Judíos en Jerusalem al varón cuyo es este cinto, y le entregarán en manos de los Gentiles.
Lo cual como oímos, le rogamos nosotros y los de aquel lugar, que no subiese á Jerusalem.
Entonces Pablo respondió: ¿Qué hacéis llorando y afligiéndome el corazón? porque yo no sólo estoy presto á ser atado, mas aun á morir en Jerusalem por el nombre del Señor Jesús.
Y como no le pudimos persuadir, desistimos, diciendo: Hágase la voluntad del Señor.
Y después de estos días, apercibidos, subimos á Jerusalem.
Y vinieron también con nosotros de Cesarea algunos de los discípulos, trayendo consigo á un Mnasón, Cyprio, discípulo antiguo, con el cual posásemos.
Y cuando llegamos á Jerusalem, los hermanos nos recibieron de buena voluntad.
Y al día siguiente Pablo entró con nosotros á Jacobo, y todos los ancianos se juntaron;
A los cuales, como los hubo saludado, contó por menudo lo que Dios había hecho entre los Gentiles por su ministerio.
Y ellos como lo oyeron, glorificaron á Dios, y le dijeron: Ya ves, hermano, cuántos millares de Judíos hay que han creído; y todos son celadores de la ley:
Mas fueron informados acerca de ti, que enseñas á apartarse de Moisés á todos los Judíos que están entre los Gentiles, diciéndoles que no han de circuncidar á los hijos, ni andar según la costumbre.
¿Qué hay pues? La multitud se reunirá de cierto: porque oirán que has venido.
Haz pues esto que te decimos: Hay entre nosotros cuatro hombres que tienen voto sobre sí:
Tomando á éstos contigo, purifícate con ellos, y gasta con ellos, para que rasuren sus cabezas, y todos entiendan que no hay nada de lo que fueron informados acerca de ti; sino que tú también andas guardando la ley.
Empero cuanto á los que de los Gentiles han creído, nosotros hemos escrito haberse acordado que no guarden nada de esto; solamente que se abstengan de lo que fuere sacrificado á los ídolos, y de sangre, y de ahogado, y de fornicación.
Entonces Pablo tomó consigo aquellos hombres, y al día siguiente, habiéndose purificado con ellos, entró en el templo, para anunciar el cumplimiento de los días de la purificación, hasta ser ofrecida ofrenda por cada uno de ellos.
Y cuando estaban para acabarse los siete días, unos Judíos de Asia, como le vieron en el templo, alborotaron todo el pueblo y le echaron mano,
Dando voces: Varones Israelitas, ayudad: Este es el hombre que por todas partes enseña á todos contra el pueblo, y la ley, y este lugar; y además de esto ha metido Gentiles en el templo, y ha contaminado este lugar santo.
Porque antes habían visto con él en la ciudad á Trófimo, Efesio, al cual pensaban que Pablo había metido en el templo.
Así que, toda la ciudad se alborotó, y agolpóse el pueblo; y tomando á Pablo, hiciéronle salir fuera del templo, y luego las puertas fueron cerradas.
Y procurando ellos matarle, fué dado aviso al tribuno de la compañía, que toda la ciudad de Jerusalem estaba alborotada;
El cual tomando luego soldados y centuriones, corrió á ellos. Y ellos como vieron al tribuno y á los soldados, cesaron de herir á Pablo.
Entonces llegando el tribuno, le prendió, y le mandó atar con dos cadenas; y preguntó quién era, y qué había hecho.
Y entre la multitud, unos gritaban una cosa, y otros otra: y como no podía entender nada de cierto á causa del alboroto, le mandó llevar á la fortaleza.
Y como llegó á las gradas, aconteció que fué llevado de los soldados á causa de la violencia del pueblo;
Porque multitud de pueblo venía detrás, gritando: Mátale.
Y como comenzaron á meter á Pablo en la fortaleza, dice al tribuno: ¿Me será lícito hablarte algo? Y él dijo: ¿Sabes griego?
¿No eres tú aquel Egipcio que levantaste una sedición antes de estos días, y sacaste al desierto cuatro mil hombres salteadores?
Entonces dijo Pablo: Yo de cierto soy hombre Judío, ciudadano de Tarso, ciudad no obscura de Cilicia: empero ruégote que me permitas que hable al pueblo.
Y como él se lo permitió, Pablo, estando en pie en las gradas, hizo señal con la mano al pueblo. Y hecho grande silencio, habló en lengua hebrea, diciendo:
